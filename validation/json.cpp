#include "validation/json.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace stepcast::json {

ParseError::ParseError(int line, int column, const std::string& message)
    : std::runtime_error(std::to_string(line) + ":" + std::to_string(column) + ": " + message),
      m_line(line),
      m_column(column) {}

std::string_view to_string(Type type) {
  switch (type) {
    case Type::null: return "null";
    case Type::boolean: return "a boolean";
    case Type::number: return "a number";
    case Type::string: return "a string";
    case Type::array: return "an array";
    case Type::object: return "an object";
  }
  return "?";
}

namespace {

[[noreturn]] void wrong_type(Type expected, Type found) {
  throw TypeError("expected " + std::string(to_string(expected)) + ", found " + std::string(to_string(found)));
}

}  // namespace

Value Value::array() {
  Value v;
  v.m_type = Type::array;
  return v;
}

Value Value::object() {
  Value v;
  v.m_type = Type::object;
  return v;
}

bool Value::as_bool() const {
  if (m_type != Type::boolean) wrong_type(Type::boolean, m_type);
  return m_bool;
}

double Value::as_number() const {
  if (m_type != Type::number) wrong_type(Type::number, m_type);
  return m_number;
}

const std::string& Value::as_string() const {
  if (m_type != Type::string) wrong_type(Type::string, m_type);
  return m_string;
}

void Value::push_back(Value v) {
  if (m_type != Type::array) wrong_type(Type::array, m_type);
  m_array.push_back(std::move(v));
}

const std::vector<Value>& Value::items() const {
  if (m_type != Type::array) wrong_type(Type::array, m_type);
  return m_array;
}

Value& Value::set(std::string_view key, Value v) {
  if (m_type != Type::object) wrong_type(Type::object, m_type);
  for (Member& m : m_object) {
    if (m.key == key) {
      m.value = std::move(v);
      return m.value;
    }
  }
  m_object.push_back(Member{std::string(key), std::move(v)});
  return m_object.back().value;
}

const Value* Value::find(std::string_view key) const {
  if (m_type != Type::object) wrong_type(Type::object, m_type);
  for (const Member& m : m_object) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

const std::vector<Member>& Value::members() const {
  if (m_type != Type::object) wrong_type(Type::object, m_type);
  return m_object;
}

std::size_t Value::size() const {
  if (m_type == Type::array) return m_array.size();
  if (m_type == Type::object) return m_object.size();
  throw TypeError("expected an array or an object, found " + std::string(to_string(m_type)));
}

bool operator==(const Value& a, const Value& b) {
  if (a.m_type != b.m_type) return false;
  switch (a.m_type) {
    case Type::null: return true;
    case Type::boolean: return a.m_bool == b.m_bool;
    case Type::number: return a.m_number == b.m_number;
    case Type::string: return a.m_string == b.m_string;
    case Type::array: return a.m_array == b.m_array;
    case Type::object:
      if (a.m_object.size() != b.m_object.size()) return false;
      for (std::size_t i = 0; i < a.m_object.size(); ++i) {
        if (a.m_object[i].key != b.m_object[i].key || !(a.m_object[i].value == b.m_object[i].value)) return false;
      }
      return true;
  }
  return false;
}

// --- Writer ----------------------------------------------------------------------------------

namespace {

void write_string(std::string& out, std::string_view s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          static const char* hex = "0123456789abcdef";
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 0xF];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void write_number(std::string& out, double d) {
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  char buf[32];
  // Integral values below 2^53 print as integers ("1024", not "1024.0" or "1.024e+03").
  if (d == std::trunc(d) && std::fabs(d) < 9007199254740992.0) {
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<long long>(d));
    out.append(buf, end);
    return;
  }
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);  // shortest round-trip form
  out.append(buf, end);
}

void write_value(std::string& out, const Value& v, int indent, int depth) {
  const auto newline = [&](int level) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<std::size_t>(indent * level), ' ');
  };
  switch (v.type()) {
    case Type::null: out += "null"; break;
    case Type::boolean: out += v.as_bool() ? "true" : "false"; break;
    case Type::number: write_number(out, v.as_number()); break;
    case Type::string: write_string(out, v.as_string()); break;
    case Type::array: {
      const auto& items = v.items();
      if (items.empty()) {
        out += "[]";
        break;
      }
      // Arrays of scalars stay on one line: argv lists and sample vectors read better that way.
      bool scalars = true;
      for (const Value& item : items) scalars = scalars && !item.is_array() && !item.is_object();
      out += '[';
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += ',';
        if (scalars) {
          if (i > 0 && indent >= 0) out += ' ';
        } else {
          newline(depth + 1);
        }
        write_value(out, items[i], indent, depth + 1);
      }
      if (!scalars) newline(depth);
      out += ']';
      break;
    }
    case Type::object: {
      const auto& members = v.members();
      if (members.empty()) {
        out += "{}";
        break;
      }
      out += '{';
      for (std::size_t i = 0; i < members.size(); ++i) {
        if (i > 0) out += ',';
        newline(depth + 1);
        write_string(out, members[i].key);
        out += indent < 0 ? ":" : ": ";
        write_value(out, members[i].value, indent, depth + 1);
      }
      newline(depth);
      out += '}';
      break;
    }
  }
}

}  // namespace

std::string write(const Value& value, int indent) {
  std::string out;
  write_value(out, value, indent, 0);
  if (indent >= 0) out += '\n';
  return out;
}

// --- Parser ----------------------------------------------------------------------------------

namespace {

constexpr int kMaxDepth = 256;

class Parser {
 public:
  explicit Parser(std::string_view text) : m_text(text) {}

  Value parse_document() {
    skip_whitespace();
    if (at_end()) fail("empty document: expected a JSON value");
    Value v = parse_value(0);
    skip_whitespace();
    if (!at_end()) fail("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& message) const { throw ParseError(m_line, m_column, message); }

  [[nodiscard]] bool at_end() const { return m_pos >= m_text.size(); }
  [[nodiscard]] char peek() const { return m_text[m_pos]; }

  char next() {
    const char c = m_text[m_pos++];
    if (c == '\n') {
      ++m_line;
      m_column = 1;
    } else {
      ++m_column;
    }
    return c;
  }

  void skip_whitespace() {
    while (!at_end()) {
      const char c = peek();
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      next();
    }
  }

  void expect_literal(std::string_view word) {
    if (m_text.substr(m_pos, word.size()) != word) fail("invalid literal: expected '" + std::string(word) + "'");
    for (std::size_t i = 0; i < word.size(); ++i) next();
  }

  Value parse_value(int depth) {
    if (depth > kMaxDepth) fail("nesting deeper than 256 levels");
    const int line = m_line;
    const int column = m_column;
    Value v;
    switch (peek()) {
      case 'n': expect_literal("null"); break;
      case 't': expect_literal("true"); v = Value(true); break;
      case 'f': expect_literal("false"); v = Value(false); break;
      case '"': v = Value(parse_string()); break;
      case '[': v = parse_array(depth); break;
      case '{': v = parse_object(depth); break;
      default:
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) {
          v = Value(parse_number());
        } else {
          fail(std::string("unexpected character '") + peek() + "': expected a JSON value");
        }
    }
    v.set_position(line, column);
    return v;
  }

  double parse_number() {
    const std::size_t start = m_pos;
    const auto digits = [&] {
      std::size_t n = 0;
      while (!at_end() && peek() >= '0' && peek() <= '9') {
        next();
        ++n;
      }
      return n;
    };
    if (peek() == '-') next();
    if (at_end()) fail("incomplete number");
    if (peek() == '0') {
      next();
    } else if (digits() == 0) {
      fail("invalid number: expected a digit");
    }
    if (!at_end() && peek() == '.') {
      next();
      if (digits() == 0) fail("invalid number: expected a digit after '.'");
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      next();
      if (!at_end() && (peek() == '+' || peek() == '-')) next();
      if (digits() == 0) fail("invalid number: expected a digit in the exponent");
    }
    double d = 0.0;
    const char* first = m_text.data() + start;
    const char* last = m_text.data() + m_pos;
    auto [ptr, ec] = std::from_chars(first, last, d);
    if (ec == std::errc::result_out_of_range) fail("number out of range");
    if (ec != std::errc() || ptr != last) fail("invalid number");
    return d;
  }

  unsigned parse_hex4() {
    unsigned code = 0;
    for (int i = 0; i < 4; ++i) {
      if (at_end()) fail("incomplete \\u escape");
      const char c = next();
      code <<= 4;
      if (c >= '0' && c <= '9') {
        code |= static_cast<unsigned>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        code |= static_cast<unsigned>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        code |= static_cast<unsigned>(c - 'A' + 10);
      } else {
        fail("invalid hex digit in \\u escape");
      }
    }
    return code;
  }

  static void append_utf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  std::string parse_string() {
    next();  // opening quote
    std::string out;
    while (true) {
      if (at_end()) fail("unterminated string");
      const char c = next();
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character inside a string (escape it)");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_end()) fail("unterminated escape");
      const char e = next();
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned code = parse_hex4();
          if (code >= 0xD800 && code <= 0xDBFF) {
            if (m_text.substr(m_pos, 2) != "\\u") fail("unpaired high surrogate in \\u escape");
            next();
            next();
            const unsigned low = parse_hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("invalid low surrogate in \\u escape");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          } else if (code >= 0xDC00 && code <= 0xDFFF) {
            fail("unpaired low surrogate in \\u escape");
          }
          append_utf8(out, code);
          break;
        }
        default: fail(std::string("invalid escape '\\") + e + "'");
      }
    }
  }

  Value parse_array(int depth) {
    next();  // [
    Value v = Value::array();
    skip_whitespace();
    if (!at_end() && peek() == ']') {
      next();
      return v;
    }
    while (true) {
      skip_whitespace();
      if (at_end()) fail("unterminated array");
      v.push_back(parse_value(depth + 1));
      skip_whitespace();
      if (at_end()) fail("unterminated array");
      const char c = next();
      if (c == ']') return v;
      if (c != ',') fail("expected ',' or ']' in array");
    }
  }

  Value parse_object(int depth) {
    next();  // {
    Value v = Value::object();
    skip_whitespace();
    if (!at_end() && peek() == '}') {
      next();
      return v;
    }
    while (true) {
      skip_whitespace();
      if (at_end() || peek() != '"') fail("expected a string key in object");
      std::string key = parse_string();
      if (v.find(key) != nullptr) fail("duplicate key '" + key + "'");
      skip_whitespace();
      if (at_end() || next() != ':') fail("expected ':' after object key");
      skip_whitespace();
      if (at_end()) fail("unterminated object");
      v.set(key, parse_value(depth + 1));
      skip_whitespace();
      if (at_end()) fail("unterminated object");
      const char c = next();
      if (c == '}') return v;
      if (c != ',') fail("expected ',' or '}' in object");
    }
  }

  std::string_view m_text;
  std::size_t m_pos = 0;
  int m_line = 1;
  int m_column = 1;
};

}  // namespace

Value parse(std::string_view text) { return Parser(text).parse_document(); }

}  // namespace stepcast::json
