// The sweep expression grammar (simulator/expression.h): values, units, types, precedence and the
// errors a user sees.

#include <doctest/doctest.h>

#include <vector>

#include "simulator/expression.h"
#include "simulator/result_fields.h"

using namespace stepcast;

namespace {

// Three names: x (a number), on (true/false), mode (a word: "low" or "high").
ExprResolver test_resolver() {
  ExprResolver r;
  r.lookup = [](std::string_view name) -> std::optional<ExprVariable> {
    if (name == "x") return ExprVariable{0, ExprType::number, {}};
    if (name == "on") return ExprVariable{1, ExprType::truth, {}};
    if (name == "mode") return ExprVariable{2, ExprType::word, {"low", "high"}};
    if (name == "group.size") return ExprVariable{3, ExprType::number, {}};
    return std::nullopt;
  };
  r.known_names = [] { return std::vector<std::string>{"x", "on", "mode", "group.size"}; };
  return r;
}

double eval(const std::string& text, std::vector<double> values = {3.0, 1.0, 1.0, 8.0}) {
  ExprError error;
  const auto e = Expression::parse(text, test_resolver(), error);
  REQUIRE_MESSAGE(e.has_value(), text << ": " << error.message);
  return e->evaluate(values);
}

ExprError error_of(const std::string& text) {
  ExprError error;
  const auto e = Expression::parse(text, test_resolver(), error);
  CHECK_MESSAGE(!e.has_value(), text << " parsed but should not");
  return error;
}

}  // namespace

TEST_CASE("arithmetic follows the usual precedence and associativity") {
  CHECK(eval("1 + 2 * 3") == 7.0);
  CHECK(eval("(1 + 2) * 3") == 9.0);
  CHECK(eval("8 / 4 / 2") == 1.0);
  CHECK(eval("10 - 4 - 3") == 3.0);
  CHECK(eval("-x * 2") == -6.0);
  CHECK(eval("x * group.size") == 24.0);
  CHECK(eval("1e3 + .5") == 1000.5);
}

TEST_CASE("numbers with units are their SI values") {
  CHECK(eval("70 GiB") == 70.0 * 1024 * 1024 * 1024);
  CHECK(eval("1.5 s") == 1.5);
  CHECK(eval("500ms") == doctest::Approx(0.5));
  CHECK(eval("400 Gb/s") == 50e9);
  CHECK(eval("2 * 80 GB") == 160e9);
}

TEST_CASE("comparisons and logic give true (1) or false (0); 'and' binds tighter than 'or'") {
  CHECK(eval("x <= 3") == 1.0);
  CHECK(eval("x < 3") == 0.0);
  CHECK(eval("x == 3 and on") == 1.0);
  CHECK(eval("x > 5 or on and x == 3") == 1.0);
  CHECK(eval("not on or x == 3") == 1.0);
  CHECK(eval("not (on or x == 3)") == 0.0);
  CHECK(eval("x != 3 || on && true") == 1.0);
  CHECK(eval("!on") == 0.0);
}

TEST_CASE("a word-valued name compares with its quoted values by index") {
  CHECK(eval("mode == \"high\"") == 1.0);   // mode = 1 -> "high"
  CHECK(eval("mode != 'low'") == 1.0);
  CHECK(eval("\"low\" == mode", {0, 0, 0, 0}) == 1.0);
}

TEST_CASE("type errors are found when parsing, with the column of the offending value") {
  auto e = error_of("x and on");
  CHECK(e.column == 1);
  CHECK(e.message == "'and' needs true/false, found a number ('x')");
  e = error_of("on + 1");
  CHECK(e.message == "'+' needs a number, found true/false ('on')");
  e = error_of("mode < \"high\"");
  CHECK(e.message == "quoted text can only be compared with == or !=");
  e = error_of("x == \"high\"");
  CHECK(e.message.find("can only be compared with a name whose values are words") != std::string::npos);
  e = error_of("mode == \"hihg\"");
  CHECK(e.column == 9);
  CHECK(e.message == "'mode' is never \"hihg\"; its values are low, high");
  CHECK(e.suggestion == "did you mean 'high'?");
  e = error_of("mode");
  CHECK(e.message == "'mode' holds a word; compare it, e.g. mode == \"low\"");
}

TEST_CASE("syntax errors name the column and what was expected") {
  auto e = error_of("x <= ");
  CHECK(e.message == "the expression ends where a value is expected");
  e = error_of("1 < x < 5");
  CHECK(e.column == 7);
  CHECK(e.message == "comparisons do not chain; write a <= b and b <= c");
  e = error_of("x = 3");
  CHECK(e.column == 3);
  CHECK(e.message == "'=' is not an operator; compare with '=='");
  e = error_of("(x + 1");
  CHECK(e.message == "expected ')' to close the '(' at column 1");
  e = error_of("70 GiBs");
  CHECK(e.column == 4);
  CHECK(e.message == "unknown unit 'GiBs'");
  e = error_of("xx > 1");
  CHECK(e.message == "unknown name 'xx'");
  CHECK(e.suggestion == "did you mean 'x'?");
  e = error_of("x $ 1");
  CHECK(e.message == "unexpected character '$'");
  e = error_of("");
  CHECK(e.message == "the expression is empty");
}

TEST_CASE("an expression too deep for the evaluation stack is refused, not overflowed") {
  std::string deep;
  for (int i = 0; i < 70; ++i) deep += "(1 + ";
  deep += "1";
  for (int i = 0; i < 70; ++i) deep += ")";
  // Right-nested sums keep every left operand pending: 71 values at once.
  ExprError error;
  CHECK_FALSE(Expression::parse(deep, test_resolver(), error).has_value());
  CHECK(error.message.find("nests too deeply") != std::string::npos);
}

TEST_CASE("the training field table resolves scenario keys and results, with their phase") {
  const FieldTable& t = FieldTable::training();
  ExprError error;
  const auto e = Expression::parse("memory_per_gpu_bytes.peak <= 70 GiB and parallel.recompute != \"full\"", t.resolver(), error);
  REQUIRE(e.has_value());
  CHECK(t.phase_of(*e) == FieldPhase::memory);
  const auto s = Expression::parse("step_time_s < 10 s", t.resolver(), error);
  REQUIRE(s.has_value());
  CHECK(t.phase_of(*s) == FieldPhase::time);
  const auto k = Expression::parse("parallel.tp * parallel.pp <= 64", t.resolver(), error);
  REQUIRE(k.has_value());
  CHECK(t.phase_of(*k) == FieldPhase::key);
  CHECK(t.format(t.slot_of("parallel.recompute"), 1.0) == "selective");
  CHECK(t.format(t.slot_of("parallel.tp"), 8.0) == "8");
  CHECK(t.format(t.slot_of("fits"), 0.0) == "false");
  CHECK(t.format(t.slot_of("step_time_s"), 0.1) == "0.1");
}
