#include "simulator/expression.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cctype>
#include <charconv>
#include <cmath>

#include "simulator/diagnostics.h"
#include "simulator/quantity_parse.h"

namespace stepcast {
namespace {

// Deepest evaluation stack an expression may need; deeper ones are refused when parsed (they are
// also far beyond anything a person writes).
constexpr int kMaxStack = 64;

enum class TokenKind { number, name, text, op, open, close, end };

struct Token {
  TokenKind kind = TokenKind::end;
  std::string text;   // name, text literal or operator spelling
  double value = 0.0; // number (SI, unit applied)
  int column = 1;     // 1-based
};

bool is_word_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-'; }
std::string fmt_quoted(std::string_view w) {
  std::string out;
  out.reserve(w.size() + 2);
  out.push_back('\'');
  out.append(w);
  out.push_back('\'');
  return out;
}

bool is_keyword(std::string_view w) { return w == "and" || w == "or" || w == "not" || w == "true" || w == "false"; }

struct Failure {
  ExprError error;
};

[[noreturn]] void fail(int column, std::string message, std::string suggestion = {}) {
  throw Failure{ExprError{column, std::move(message), std::move(suggestion)}};
}

class Lexer {
 public:
  explicit Lexer(std::string_view text) : m_text(text) {}

  std::vector<Token> tokens() {
    std::vector<Token> out;
    while (true) {
      skip_spaces();
      if (m_pos >= m_text.size()) break;
      out.push_back(next());
    }
    out.push_back(Token{TokenKind::end, "", 0.0, column()});
    return out;
  }

 private:
  int column() const { return static_cast<int>(m_pos) + 1; }
  void skip_spaces() {
    while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos])) != 0) ++m_pos;
  }

  Token next() {
    const char c = m_text[m_pos];
    const int col = column();
    if (std::isdigit(static_cast<unsigned char>(c)) != 0 || (c == '.' && m_pos + 1 < m_text.size() &&
                                                             std::isdigit(static_cast<unsigned char>(m_text[m_pos + 1])) != 0)) {
      return number(col);
    }
    if (is_word_start(c)) {
      std::size_t end = m_pos;
      while (end < m_text.size() && (is_word_char(m_text[end]) || m_text[end] == '.')) ++end;
      Token t{TokenKind::name, std::string(m_text.substr(m_pos, end - m_pos)), 0.0, col};
      m_pos = end;
      if (t.text.back() == '.') fail(col, "a name cannot end with '.': '" + t.text + "'");
      if (t.text == "and" || t.text == "or" || t.text == "not") t.kind = TokenKind::op;
      return t;
    }
    if (c == '"' || c == '\'') {
      const std::size_t close = m_text.find(c, m_pos + 1);
      if (close == std::string_view::npos) fail(col, "unterminated text: a closing " + std::string(1, c) + " is missing");
      Token t{TokenKind::text, std::string(m_text.substr(m_pos + 1, close - m_pos - 1)), 0.0, col};
      m_pos = close + 1;
      return t;
    }
    if (c == '(' || c == ')') {
      ++m_pos;
      return Token{c == '(' ? TokenKind::open : TokenKind::close, std::string(1, c), 0.0, col};
    }
    for (std::string_view op : {"<=", ">=", "==", "!=", "&&", "||"}) {
      if (m_text.substr(m_pos, 2) == op) {
        m_pos += 2;
        if (op == "&&") return Token{TokenKind::op, "and", 0.0, col};
        if (op == "||") return Token{TokenKind::op, "or", 0.0, col};
        return Token{TokenKind::op, std::string(op), 0.0, col};
      }
    }
    if (std::string_view("<>+-*/!").find(c) != std::string_view::npos) {
      ++m_pos;
      if (c == '!') return Token{TokenKind::op, "not", 0.0, col};
      return Token{TokenKind::op, std::string(1, c), 0.0, col};
    }
    if (c == '=') fail(col, "'=' is not an operator; compare with '=='");
    fail(col, "unexpected character '" + std::string(1, c) + "'");
  }

  // A decimal number, optionally followed by a unit ("70 GiB", "1.5s", "400 Gb/s").
  Token number(int col) {
    const char* begin = m_text.data() + m_pos;
    const char* end = m_text.data() + m_text.size();
    double value = 0.0;
    const auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec != std::errc()) fail(col, "not a number");
    const std::size_t number_end = m_pos + static_cast<std::size_t>(ptr - begin);
    std::size_t unit_start = number_end;
    while (unit_start < m_text.size() && m_text[unit_start] == ' ') ++unit_start;
    std::size_t unit_end = unit_start;
    while (unit_end < m_text.size() &&
           (std::isalpha(static_cast<unsigned char>(m_text[unit_end])) != 0 || m_text[unit_end] == '/')) {
      ++unit_end;
    }
    const std::string_view unit = m_text.substr(unit_start, unit_end - unit_start);
    if (unit.empty() || is_keyword(unit) || unit.front() == '/') {
      m_pos = number_end;
      return Token{TokenKind::number, "", value, col};
    }
    const std::string quantity(m_text.substr(m_pos, unit_end - m_pos));
    for (Dimension d : {Dimension::size, Dimension::time, Dimension::bandwidth, Dimension::flop_rate, Dimension::flops,
                        Dimension::frequency, Dimension::power}) {
      const QuantityParse q = parse_quantity(quantity, d);
      if (q.ok()) {
        m_pos = unit_end;
        return Token{TokenKind::number, "", q.value, col};
      }
    }
    fail(static_cast<int>(unit_start) + 1, "unknown unit '" + std::string(unit) + "'",
         "units are written as in scenario files, e.g. 70 GiB, 1.5 s, 500 ms, 400 Gb/s, 312 TFLOP/s");
  }

  std::string_view m_text;
  std::size_t m_pos = 0;
};

}  // namespace

class ExpressionParser {
 public:
  ExpressionParser(std::vector<Token> tokens, const ExprResolver& resolver, Expression& out)
      : m_tokens(std::move(tokens)), m_resolver(resolver), m_out(out) {}

  void run() {
    const Typed t = parse_or();
    if (peek().kind != TokenKind::end) fail(peek().column, "unexpected '" + spelling(peek()) + "' after a complete expression");
    if (t.type == ExprType::text) fail(t.column, "a quoted text alone is not a value; compare it with a name, e.g. parallel.recompute == \"full\"");
    if (t.type == ExprType::word) fail(t.column, "'" + t.name + "' holds a word; compare it, e.g. " + t.name + " == \"" + t.words.front() + "\"");
    m_out.m_type = t.type;
  }

 private:
  struct Typed {
    ExprType type = ExprType::number;
    int column = 1;
    std::string name;                // for word-valued names
    std::vector<std::string> words;  // their spellings
    std::string text;                // for text literals
    std::size_t code_at = 0;         // index of the instruction that pushed a text literal
  };

  static Typed typed(ExprType type, int column) {
    Typed t;
    t.type = type;
    t.column = column;
    return t;
  }

  const Token& peek() const { return m_tokens[m_index]; }
  Token take() { return m_tokens[m_index++]; }
  bool accept_op(std::string_view op) {
    if (peek().kind == TokenKind::op && peek().text == op) {
      ++m_index;
      return true;
    }
    return false;
  }
  static std::string spelling(const Token& t) {
    switch (t.kind) {
      case TokenKind::number: return "number";
      case TokenKind::text: return "\"" + t.text + "\"";
      case TokenKind::end: return "end";
      default: return t.text;
    }
  }

  void emit(Expression::OpCode op, int slot = 0, double value = 0.0) {
    m_out.m_code.push_back({op, slot, value});
    using Op = Expression::OpCode;
    if (op == Op::constant || op == Op::variable) {
      ++m_depth;
      if (m_depth > kMaxStack) fail(1, "the expression nests too deeply (more than " + std::to_string(kMaxStack) + " pending values)");
      m_out.m_max_depth = std::max(m_out.m_max_depth, m_depth);
    } else if (op != Op::negate && op != Op::logical_not) {
      --m_depth;
    }
  }

  static std::string type_name(ExprType t) {
    switch (t) {
      case ExprType::number: return "a number";
      case ExprType::truth: return "true/false";
      case ExprType::word: return "a word";
      case ExprType::text: return "quoted text";
    }
    return "?";
  }

  void require(const Typed& t, ExprType want, std::string_view what) {
    if (t.type == want) return;
    fail(t.column, std::string(what) + " needs " + type_name(want) + ", found " + type_name(t.type) +
                       (t.name.empty() ? std::string() : " ('" + t.name + "')"));
  }

  Typed parse_or() {
    Typed left = parse_and();
    while (accept_op("or")) {
      require(left, ExprType::truth, "'or'");
      const Typed right = parse_and();
      require(right, ExprType::truth, "'or'");
      emit(Expression::OpCode::logical_or);
      left = typed(ExprType::truth, left.column);
    }
    return left;
  }

  Typed parse_and() {
    Typed left = parse_not();
    while (accept_op("and")) {
      require(left, ExprType::truth, "'and'");
      const Typed right = parse_not();
      require(right, ExprType::truth, "'and'");
      emit(Expression::OpCode::logical_and);
      left = typed(ExprType::truth, left.column);
    }
    return left;
  }

  Typed parse_not() {
    if (peek().kind == TokenKind::op && peek().text == "not") {
      const Token t = take();
      const Typed inner = parse_not();
      require(inner, ExprType::truth, "'not'");
      emit(Expression::OpCode::logical_not);
      return typed(ExprType::truth, t.column);
    }
    return parse_comparison();
  }

  Typed parse_comparison() {
    Typed left = parse_sum();
    static constexpr std::array<std::pair<std::string_view, Expression::OpCode>, 6> kOps = {{
        {"<", Expression::OpCode::less},
        {"<=", Expression::OpCode::less_equal},
        {">", Expression::OpCode::greater},
        {">=", Expression::OpCode::greater_equal},
        {"==", Expression::OpCode::equal},
        {"!=", Expression::OpCode::not_equal},
    }};
    for (const auto& [spelled, code] : kOps) {
      if (peek().kind != TokenKind::op || peek().text != spelled) continue;
      const Token op = take();
      Typed right = parse_sum();
      const bool equality = code == Expression::OpCode::equal || code == Expression::OpCode::not_equal;
      if (left.type == ExprType::text || right.type == ExprType::text) {
        Typed& word = left.type == ExprType::text ? right : left;
        Typed& text = left.type == ExprType::text ? left : right;
        if (!equality) fail(op.column, "quoted text can only be compared with == or !=");
        if (word.type != ExprType::word) {
          fail(text.column, "\"" + text.text + "\" can only be compared with a name whose values are words "
                            "(e.g. parallel.recompute); " + (word.name.empty() ? "this side" : "'" + word.name + "'") +
                                " holds " + type_name(word.type));
        }
        resolve_text(text, word);
      } else if (left.type == ExprType::word || right.type == ExprType::word) {
        const Typed& word = left.type == ExprType::word ? left : right;
        const Typed& other = left.type == ExprType::word ? right : left;
        if (!equality || other.type != ExprType::word || other.words != word.words) {
          fail(op.column, "'" + word.name + "' holds a word; compare it with == or != to a quoted value, e.g. " +
                              word.name + " == \"" + word.words.front() + "\"");
        }
      } else if (equality) {
        if (left.type != right.type) {
          fail(op.column, "cannot compare " + type_name(left.type) + " with " + type_name(right.type));
        }
      } else {
        const std::string what = fmt_quoted(spelled);
        require(left, ExprType::number, what);
        require(right, ExprType::number, what);
      }
      emit(code);
      if (peek().kind == TokenKind::op) {
        for (const auto& [other, unused] : kOps) {
          if (peek().text == other) {
            fail(peek().column, "comparisons do not chain; write a <= b and b <= c");
          }
        }
      }
      return typed(ExprType::truth, left.column);
    }
    return left;
  }

  // Turns a text literal compared with a word-valued name into the index of that word.
  void resolve_text(const Typed& text, const Typed& word) {
    for (std::size_t i = 0; i < word.words.size(); ++i) {
      if (word.words[i] == text.text) {
        m_out.m_code[text.code_at].value = static_cast<double>(i);
        return;
      }
    }
    std::string list;
    for (const auto& w : word.words) list += (list.empty() ? "" : ", ") + w;
    fail(text.column, "'" + word.name + "' is never \"" + text.text + "\"; its values are " + list,
         closest_match(text.text, word.words).empty() ? std::string()
                                                     : "did you mean '" + closest_match(text.text, word.words) + "'?");
  }

  Typed parse_sum() {
    Typed left = parse_product();
    while (peek().kind == TokenKind::op && (peek().text == "+" || peek().text == "-")) {
      const Token op = take();
      require(left, ExprType::number, "'" + op.text + "'");
      const Typed right = parse_product();
      require(right, ExprType::number, "'" + op.text + "'");
      emit(op.text == "+" ? Expression::OpCode::add : Expression::OpCode::subtract);
      left = typed(ExprType::number, left.column);
    }
    return left;
  }

  Typed parse_product() {
    Typed left = parse_unary();
    while (peek().kind == TokenKind::op && (peek().text == "*" || peek().text == "/")) {
      const Token op = take();
      require(left, ExprType::number, "'" + op.text + "'");
      const Typed right = parse_unary();
      require(right, ExprType::number, "'" + op.text + "'");
      emit(op.text == "*" ? Expression::OpCode::multiply : Expression::OpCode::divide);
      left = typed(ExprType::number, left.column);
    }
    return left;
  }

  Typed parse_unary() {
    if (peek().kind == TokenKind::op && peek().text == "-") {
      const Token op = take();
      const Typed inner = parse_unary();
      require(inner, ExprType::number, "'-'");
      emit(Expression::OpCode::negate);
      return typed(ExprType::number, op.column);
    }
    return parse_primary();
  }

  Typed parse_primary() {
    const Token t = take();
    switch (t.kind) {
      case TokenKind::number:
        emit(Expression::OpCode::constant, 0, t.value);
        return typed(ExprType::number, t.column);
      case TokenKind::text: {
        Typed out = typed(ExprType::text, t.column);
        out.text = t.text;
        out.code_at = m_out.m_code.size();
        emit(Expression::OpCode::constant, 0, -1.0);  // becomes the word's index when compared
        return out;
      }
      case TokenKind::open: {
        Typed inner = parse_or();
        if (peek().kind != TokenKind::close) fail(peek().column, "expected ')' to close the '(' at column " + std::to_string(t.column));
        take();
        inner.column = t.column;
        return inner;
      }
      case TokenKind::name: {
        if (t.text == "true" || t.text == "false") {
          emit(Expression::OpCode::constant, 0, t.text == "true" ? 1.0 : 0.0);
          return typed(ExprType::truth, t.column);
        }
        const auto v = m_resolver.lookup(t.text);
        if (!v) {
          const std::string near = closest_match(t.text, m_resolver.known_names());
          fail(t.column, "unknown name '" + t.text + "'", near.empty() ? std::string() : "did you mean '" + near + "'?");
        }
        emit(Expression::OpCode::variable, v->slot);
        if (std::find(m_out.m_slots.begin(), m_out.m_slots.end(), v->slot) == m_out.m_slots.end()) {
          m_out.m_slots.push_back(v->slot);
        }
        Typed out = typed(v->type, t.column);
        out.name = t.text;
        out.words = v->words;
        if (out.type == ExprType::word && out.words.empty()) out.type = ExprType::number;
        return out;
      }
      case TokenKind::end:
        fail(t.column, "the expression ends where a value is expected");
      case TokenKind::close:
        fail(t.column, "unexpected ')'");
      case TokenKind::op:
        fail(t.column, "unexpected '" + t.text + "' where a value is expected");
    }
    fail(t.column, "unexpected token");
  }

  std::vector<Token> m_tokens;
  std::size_t m_index = 0;
  const ExprResolver& m_resolver;
  Expression& m_out;
  int m_depth = 0;
};

std::optional<Expression> Expression::parse(std::string_view text, const ExprResolver& resolver, ExprError& error) {
  Expression out;
  out.m_text = std::string(text);
  try {
    Lexer lexer(text);
    std::vector<Token> tokens = lexer.tokens();
    if (tokens.size() == 1) fail(1, "the expression is empty");
    ExpressionParser parser(std::move(tokens), resolver, out);
    parser.run();
  } catch (const Failure& f) {
    error = f.error;
    return std::nullopt;
  }
  return out;
}

double Expression::evaluate(std::span<const double> values) const {
  std::array<double, kMaxStack> stack{};
  int top = 0;
  for (const Instruction& ins : m_code) {
    switch (ins.op) {
      case OpCode::constant: stack[static_cast<std::size_t>(top++)] = ins.value; break;
      case OpCode::variable:
        assert(static_cast<std::size_t>(ins.slot) < values.size());
        stack[static_cast<std::size_t>(top++)] = values[static_cast<std::size_t>(ins.slot)];
        break;
      case OpCode::negate: stack[static_cast<std::size_t>(top - 1)] = -stack[static_cast<std::size_t>(top - 1)]; break;
      case OpCode::logical_not:
        stack[static_cast<std::size_t>(top - 1)] = stack[static_cast<std::size_t>(top - 1)] == 0.0 ? 1.0 : 0.0;
        break;
      default: {
        const double b = stack[static_cast<std::size_t>(--top)];
        double& a = stack[static_cast<std::size_t>(top - 1)];
        switch (ins.op) {
          case OpCode::add: a = a + b; break;
          case OpCode::subtract: a = a - b; break;
          case OpCode::multiply: a = a * b; break;
          case OpCode::divide: a = a / b; break;
          case OpCode::less: a = a < b ? 1.0 : 0.0; break;
          case OpCode::less_equal: a = a <= b ? 1.0 : 0.0; break;
          case OpCode::greater: a = a > b ? 1.0 : 0.0; break;
          case OpCode::greater_equal: a = a >= b ? 1.0 : 0.0; break;
          case OpCode::equal: a = a == b ? 1.0 : 0.0; break;
          case OpCode::not_equal: a = a != b ? 1.0 : 0.0; break;
          case OpCode::logical_and: a = (a != 0.0 && b != 0.0) ? 1.0 : 0.0; break;
          case OpCode::logical_or: a = (a != 0.0 || b != 0.0) ? 1.0 : 0.0; break;
          default: break;
        }
      }
    }
  }
  assert(top == 1);
  return stack[0];
}

}  // namespace stepcast
