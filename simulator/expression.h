#pragma once
// Small, safe expressions for sweep constraints and objectives, e.g.
//   memory_per_gpu_bytes.peak <= 70 GiB
//   parallel.tp * parallel.pp <= 64 and parallel.recompute != "full"
//   not parallel.sequence_parallel or parallel.tp > 1
//
// Grammar (lowest precedence first; no assignment, calls, loops or side effects, so an expression
// from a file can do nothing but compute a value):
//   expr       := or
//   or         := and ('or' and)*
//   and        := not ('and' not)*
//   not        := 'not' not | comparison
//   comparison := sum [('<' | '<=' | '>' | '>=' | '==' | '!=') sum]     (not chained)
//   sum        := product (('+' | '-') product)*
//   product    := unary (('*' | '/') unary)*
//   unary      := '-' unary | primary
//   primary    := number [unit] | name | "text" | 'true' | 'false' | '(' expr ')'
//   name       := word ('.' word)*        e.g. parallel.tp, time_breakdown_s.pp_bubble
// A number may carry a unit, read as in scenario files ("70 GiB", "1.5 s", "400 Gb/s"), and is
// then its SI value (bytes, seconds, bytes/s). Quoted text may only be compared (== or !=) with a
// name whose values are words (an enum such as parallel.recompute); it must be one of its values.
//
// Types are checked when parsing: arithmetic and ordering need numbers, `and`/`or`/`not` need
// truth values (comparisons, or names that are true/false like `fits`). Names are resolved once
// by a Resolver into slots; evaluation then reads a flat array of doubles (enum values as their
// index, truth values as 0/1) with a tiny stack machine, allocation-free.

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace stepcast {

enum class ExprType { number, truth, word, text };

// What a name stands for: its slot in the value array and its type. For ExprType::word the
// spellings of its values, in index order.
struct ExprVariable {
  int slot = -1;
  ExprType type = ExprType::number;
  std::vector<std::string> words;
};

// Looks a name up; std::nullopt when it is unknown. `known_names` lists every name for the
// did-you-mean of an unknown one.
struct ExprResolver {
  std::function<std::optional<ExprVariable>(std::string_view name)> lookup;
  std::function<std::vector<std::string>()> known_names;
};

// A parse error: `column` is 1-based within the expression text.
struct ExprError {
  int column = 0;
  std::string message;
  std::string suggestion;
};

class Expression {
 public:
  // Parses `text`; on failure returns std::nullopt and fills `error`.
  static std::optional<Expression> parse(std::string_view text, const ExprResolver& resolver, ExprError& error);

  [[nodiscard]] ExprType type() const { return m_type; }
  [[nodiscard]] const std::string& text() const { return m_text; }
  // Slots this expression reads (each once, in first-use order).
  [[nodiscard]] const std::vector<int>& slots() const { return m_slots; }

  // True when the expression is one name and nothing else (e.g. "step_time_s").
  [[nodiscard]] bool is_single_name() const { return m_code.size() == 1 && m_code.front().op == OpCode::variable; }

  // The value with every slot read from `values` (truth values as 0 or 1).
  [[nodiscard]] double evaluate(std::span<const double> values) const;
  [[nodiscard]] bool holds(std::span<const double> values) const { return evaluate(values) != 0.0; }

  enum class OpCode : unsigned char {
    constant, variable, negate, add, subtract, multiply, divide,
    less, less_equal, greater, greater_equal, equal, not_equal, logical_and, logical_or, logical_not
  };
  struct Instruction {
    OpCode op = OpCode::constant;
    int slot = 0;        // for variable
    double value = 0.0;  // for constant
  };

 private:
  std::string m_text;
  ExprType m_type = ExprType::number;
  std::vector<Instruction> m_code;  // postfix
  std::vector<int> m_slots;
  int m_max_depth = 0;
  friend class ExpressionParser;
};

}  // namespace stepcast
