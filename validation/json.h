#pragma once
// A small JSON document model with a writer and a parser, for measurement files.
//
// The harness must build on a bare CUDA machine with no -dev packages, so the measurement-file
// code cannot use nlohmann/json. This covers what those files need:
//   - null, booleans, numbers (IEEE double; integers up to 2^53 round-trip exactly), strings
//     (UTF-8; the parser decodes every JSON escape including \uXXXX surrogate pairs), arrays, and
//     objects that keep their keys in insertion order, so written files read like the schema;
//   - write(): compact or indented text; numbers in the shortest form that reads back to the same
//     double; non-finite numbers (which JSON cannot hold) are written as null;
//   - parse(): strict RFC 8259 (no comments, no trailing commas, one top-level value); every value
//     remembers the 1-based line and column where it started, so readers can point at the
//     offending value; errors throw json::ParseError with the line and column.
// Accessors that find the wrong type throw json::TypeError naming what was expected.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stepcast::json {

class ParseError : public std::runtime_error {
 public:
  ParseError(int line, int column, const std::string& message);
  [[nodiscard]] int line() const { return m_line; }
  [[nodiscard]] int column() const { return m_column; }

 private:
  int m_line;
  int m_column;
};

class TypeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Type { null, boolean, number, string, array, object };
std::string_view to_string(Type type);

class Value;
struct Member;

class Value {
 public:
  Value() = default;  // null
  Value(std::nullptr_t) {}
  Value(bool b) : m_type(Type::boolean), m_bool(b) {}
  Value(double d) : m_type(Type::number), m_number(d) {}
  Value(int i) : Value(static_cast<double>(i)) {}
  Value(long i) : Value(static_cast<double>(i)) {}
  Value(long long i) : Value(static_cast<double>(i)) {}
  Value(unsigned i) : Value(static_cast<double>(i)) {}
  Value(unsigned long i) : Value(static_cast<double>(i)) {}
  Value(unsigned long long i) : Value(static_cast<double>(i)) {}
  Value(const char* s) : m_type(Type::string), m_string(s) {}
  Value(std::string s) : m_type(Type::string), m_string(std::move(s)) {}
  Value(std::string_view s) : m_type(Type::string), m_string(s) {}
  Value(const void*) = delete;  // a stray pointer must not silently become a boolean

  static Value array();
  static Value object();

  [[nodiscard]] Type type() const { return m_type; }
  [[nodiscard]] bool is_null() const { return m_type == Type::null; }
  [[nodiscard]] bool is_bool() const { return m_type == Type::boolean; }
  [[nodiscard]] bool is_number() const { return m_type == Type::number; }
  [[nodiscard]] bool is_string() const { return m_type == Type::string; }
  [[nodiscard]] bool is_array() const { return m_type == Type::array; }
  [[nodiscard]] bool is_object() const { return m_type == Type::object; }

  [[nodiscard]] bool as_bool() const;
  [[nodiscard]] double as_number() const;
  [[nodiscard]] const std::string& as_string() const;

  // Arrays.
  void push_back(Value v);
  [[nodiscard]] const std::vector<Value>& items() const;
  // Objects. set() replaces the value of an existing key, else appends the key.
  Value& set(std::string_view key, Value v);
  [[nodiscard]] const Value* find(std::string_view key) const;
  [[nodiscard]] const std::vector<Member>& members() const;

  [[nodiscard]] std::size_t size() const;  // elements of an array or members of an object

  // Where the parser found this value (1-based); 0 for values built in code.
  [[nodiscard]] int line() const { return m_line; }
  [[nodiscard]] int column() const { return m_column; }
  void set_position(int line, int column) {
    m_line = line;
    m_column = column;
  }

  friend bool operator==(const Value& a, const Value& b);

 private:
  Type m_type = Type::null;
  bool m_bool = false;
  double m_number = 0.0;
  std::string m_string;
  std::vector<Value> m_array;
  std::vector<Member> m_object;
  int m_line = 0;
  int m_column = 0;
};

struct Member {
  std::string key;
  Value value;
};

// indent < 0: compact, one line. indent >= 0: pretty-printed with that many spaces per level.
std::string write(const Value& value, int indent = 2);

// Parses exactly one JSON document (surrounding whitespace allowed).
Value parse(std::string_view text);

}  // namespace stepcast::json
