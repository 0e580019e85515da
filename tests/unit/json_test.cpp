#include <doctest/doctest.h>

#include <limits>

#include "validation/json.h"

using namespace stepcast;

TEST_CASE("json values round-trip through text, keys in insertion order") {
  json::Value o = json::Value::object();
  o.set("zeta", 1);
  o.set("alpha", "text with \"quotes\", a tab\t and \xc3\xa9");
  json::Value a = json::Value::array();
  a.push_back(nullptr);
  a.push_back(true);
  a.push_back(1.5e-7);
  a.push_back(9007199254740991.0);  // 2^53 - 1, exact
  o.set("list", a);
  const std::string text = json::write(o);
  CHECK(text.find("\"zeta\"") < text.find("\"alpha\""));
  const json::Value back = json::parse(text);
  CHECK(back == o);
  CHECK(json::write(back) == text);
}

TEST_CASE("integral numbers print without exponent or fraction, others in shortest round-trip form") {
  CHECK(json::write(json::Value(1024), -1) == "1024");
  CHECK(json::write(json::Value(1073741824.0), -1) == "1073741824");
  CHECK(json::write(json::Value(0.1), -1) == "0.1");
  CHECK(json::parse(json::write(json::Value(1.0 / 3.0), -1)).as_number() == 1.0 / 3.0);
}

TEST_CASE("non-finite numbers are written as null") {
  CHECK(json::write(json::Value(std::numeric_limits<double>::infinity()), -1) == "null");
}

TEST_CASE("unicode escapes decode to UTF-8, surrogate pairs included") {
  CHECK(json::parse(R"("\u00e9")").as_string() == "\xc3\xa9");
  CHECK(json::parse(R"("\ud83d\ude00")").as_string() == "\xf0\x9f\x98\x80");
  CHECK_THROWS_AS(json::parse(R"("\ud83d")"), json::ParseError);
}

TEST_CASE("parse errors report line and column") {
  try {
    json::parse("{\n  \"a\": 1,\n  \"b\": tru\n}");
    FAIL("expected a parse error");
  } catch (const json::ParseError& e) {
    CHECK(e.line() == 3);
    CHECK(e.column() == 8);
  }
  CHECK_THROWS_AS(json::parse("[1, 2,]"), json::ParseError);
  CHECK_THROWS_AS(json::parse("{\"a\": 1, \"a\": 2}"), json::ParseError);
  CHECK_THROWS_AS(json::parse("01"), json::ParseError);
  CHECK_THROWS_AS(json::parse("{} {}"), json::ParseError);
  CHECK_THROWS_AS(json::parse(""), json::ParseError);
}

TEST_CASE("parsed values remember where they started") {
  const json::Value v = json::parse("{\n  \"x\": [10, 20]\n}");
  const json::Value& x = *v.find("x");
  CHECK(x.line() == 2);
  CHECK(x.column() == 8);
  CHECK(x.items()[1].column() == 13);
}

TEST_CASE("accessing the wrong type throws a type error naming both types") {
  const json::Value v(3.0);
  CHECK_THROWS_WITH_AS(static_cast<void>(v.as_string()), "expected a string, found a number", json::TypeError);
}
