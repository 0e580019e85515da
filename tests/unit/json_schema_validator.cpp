#include "json_schema_validator.h"

#include <cmath>
#include <regex>
#include <set>
#include <stdexcept>

namespace stepcast::testing {

namespace {

class Validator {
 public:
  explicit Validator(const json::Value& root) : m_root(root) {}

  void validate(const json::Value& v, const json::Value& schema, const std::string& path,
                std::vector<std::string>& errors) const {
    if (schema.is_bool()) {
      if (!schema.as_bool()) errors.push_back(at(path) + "no value is allowed here");
      return;
    }
    static const std::set<std::string> kAnnotations = {"$schema", "$id", "title", "description", "$comment", "$defs"};
    static const std::set<std::string> kKeywords = {
        "type", "enum", "const", "properties", "required", "additionalProperties", "items", "minItems", "minimum",
        "exclusiveMinimum", "maximum", "pattern", "$ref", "allOf", "anyOf", "oneOf", "not", "if", "then", "else"};
    for (const json::Member& m : schema.members()) {
      if (kAnnotations.count(m.key) == 0 && kKeywords.count(m.key) == 0) {
        throw std::invalid_argument("schema keyword '" + m.key + "' is not supported by the test validator");
      }
    }
    if (const json::Value* ref = schema.find("$ref")) validate(v, resolve(ref->as_string()), path, errors);
    if (const json::Value* type = schema.find("type")) check_type(v, *type, path, errors);
    if (const json::Value* c = schema.find("const")) {
      if (!(v == *c)) errors.push_back(at(path) + "expected " + json::write(*c, -1) + ", found " + json::write(v, -1));
    }
    if (const json::Value* e = schema.find("enum")) {
      bool found = false;
      for (const json::Value& option : e->items()) found = found || option == v;
      if (!found) errors.push_back(at(path) + json::write(v, -1) + " is not one of " + json::write(*e, -1));
    }
    if (v.is_number()) check_number(v.as_number(), schema, path, errors);
    if (v.is_string()) {
      if (const json::Value* pattern = schema.find("pattern")) {
        if (!std::regex_search(v.as_string(), std::regex(pattern->as_string()))) {
          errors.push_back(at(path) + "'" + v.as_string() + "' does not match " + pattern->as_string());
        }
      }
    }
    if (v.is_array()) {
      if (const json::Value* min_items = schema.find("minItems")) {
        if (static_cast<double>(v.items().size()) < min_items->as_number()) {
          errors.push_back(at(path) + "expected at least " + json::write(*min_items, -1) + " items");
        }
      }
      if (const json::Value* items = schema.find("items")) {
        for (std::size_t i = 0; i < v.items().size(); ++i) {
          validate(v.items()[i], *items, path + "[" + std::to_string(i) + "]", errors);
        }
      }
    }
    if (v.is_object()) check_object(v, schema, path, errors);
    if (const json::Value* all = schema.find("allOf")) {
      for (const json::Value& sub : all->items()) validate(v, sub, path, errors);
    }
    if (const json::Value* any = schema.find("anyOf")) {
      bool ok = false;
      for (const json::Value& sub : any->items()) ok = ok || matches(v, sub, path);
      if (!ok) errors.push_back(at(path) + "matches none of the anyOf alternatives");
    }
    if (const json::Value* one = schema.find("oneOf")) {
      int count = 0;
      for (const json::Value& sub : one->items()) count += matches(v, sub, path) ? 1 : 0;
      if (count != 1) errors.push_back(at(path) + "matches " + std::to_string(count) + " oneOf alternatives, not 1");
    }
    if (const json::Value* n = schema.find("not")) {
      if (matches(v, *n, path)) errors.push_back(at(path) + "matches a schema it must not match: " + json::write(*n, -1));
    }
    if (const json::Value* condition = schema.find("if")) {
      if (matches(v, *condition, path)) {
        if (const json::Value* then = schema.find("then")) validate(v, *then, path, errors);
      } else if (const json::Value* otherwise = schema.find("else")) {
        validate(v, *otherwise, path, errors);
      }
    }
  }

 private:
  static std::string at(const std::string& path) { return (path.empty() ? std::string("(root)") : path) + ": "; }

  bool matches(const json::Value& v, const json::Value& schema, const std::string& path) const {
    std::vector<std::string> errors;
    validate(v, schema, path, errors);
    return errors.empty();
  }

  const json::Value& resolve(const std::string& ref) const {
    const std::string prefix = "#/$defs/";
    if (ref.rfind(prefix, 0) != 0) throw std::invalid_argument("unsupported $ref '" + ref + "'");
    const json::Value* defs = m_root.find("$defs");
    const json::Value* target = defs ? defs->find(ref.substr(prefix.size())) : nullptr;
    if (target == nullptr) throw std::invalid_argument("$ref '" + ref + "' does not resolve");
    return *target;
  }

  static bool has_type(const json::Value& v, const std::string& type) {
    if (type == "null") return v.is_null();
    if (type == "boolean") return v.is_bool();
    if (type == "number") return v.is_number();
    if (type == "integer") return v.is_number() && v.as_number() == std::trunc(v.as_number());
    if (type == "string") return v.is_string();
    if (type == "array") return v.is_array();
    if (type == "object") return v.is_object();
    throw std::invalid_argument("unknown type '" + type + "' in schema");
  }

  static void check_type(const json::Value& v, const json::Value& type, const std::string& path,
                         std::vector<std::string>& errors) {
    bool ok = false;
    if (type.is_string()) {
      ok = has_type(v, type.as_string());
    } else {
      for (const json::Value& t : type.items()) ok = ok || has_type(v, t.as_string());
    }
    if (!ok) errors.push_back(at(path) + "expected type " + json::write(type, -1) + ", found " + json::write(v, -1));
  }

  static void check_number(double d, const json::Value& schema, const std::string& path,
                           std::vector<std::string>& errors) {
    if (const json::Value* min = schema.find("minimum"); min && d < min->as_number()) {
      errors.push_back(at(path) + "expected a number >= " + json::write(*min, -1));
    }
    if (const json::Value* min = schema.find("exclusiveMinimum"); min && !(d > min->as_number())) {
      errors.push_back(at(path) + "expected a number > " + json::write(*min, -1));
    }
    if (const json::Value* max = schema.find("maximum"); max && d > max->as_number()) {
      errors.push_back(at(path) + "expected a number <= " + json::write(*max, -1));
    }
  }

  void check_object(const json::Value& v, const json::Value& schema, const std::string& path,
                    std::vector<std::string>& errors) const {
    const std::string prefix = path.empty() ? "" : path + ".";
    if (const json::Value* required = schema.find("required")) {
      for (const json::Value& key : required->items()) {
        if (v.find(key.as_string()) == nullptr) errors.push_back(at(path) + "missing required key '" + key.as_string() + "'");
      }
    }
    const json::Value* properties = schema.find("properties");
    const json::Value* additional = schema.find("additionalProperties");
    for (const json::Member& m : v.members()) {
      const json::Value* property = properties ? properties->find(m.key) : nullptr;
      if (property != nullptr) {
        validate(m.value, *property, prefix + m.key, errors);
      } else if (additional != nullptr) {
        if (additional->is_bool() && !additional->as_bool()) {
          errors.push_back(at(prefix + m.key) + "key is not allowed by the schema");
        } else if (additional->is_object()) {
          validate(m.value, *additional, prefix + m.key, errors);
        }
      }
    }
  }

  const json::Value& m_root;
};

}  // namespace

std::vector<std::string> validate_against_schema(const json::Value& document, const json::Value& schema) {
  std::vector<std::string> errors;
  Validator(schema).validate(document, schema, "", errors);
  return errors;
}

}  // namespace stepcast::testing
