#include "simulator/constant_overrides.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

#include "simulator/diagnostics.h"

namespace stepcast {
namespace {

std::string trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t");
  return std::string(s.substr(first, last - first + 1));
}

// Visits every settable constant of both structs by name; visit(name, value&) returns true to stop.
template <class Visit>
void visit_constants(CostParameters& cost, NcclParameters& nccl, InferenceCostParameters* inference, Visit&& visit) {
  bool stop = false;
  cost.for_each_constant([&](std::string_view name, double& value, std::string_view) {
    if (!stop) stop = visit(name, value);
  });
  nccl.for_each_parameter([&](std::string_view name, double& value, std::string_view, std::string_view) {
    if (!stop) stop = visit(name, value);
  });
  if (inference == nullptr) return;
  inference->for_each_constant([&](std::string_view name, double& value, std::string_view) {
    if (!stop) stop = visit(name, value);
  });
}

}  // namespace

ConstantOverride parse_constant_override(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos) {
    throw InputError(fmt::format("--constant '{}': expected NAME=VALUE, e.g. gemm.eta.fp8=0.7", text));
  }
  ConstantOverride out;
  out.name = trimmed(text.substr(0, eq));
  const std::string number = trimmed(text.substr(eq + 1));
  if (out.name.empty()) throw InputError(fmt::format("--constant '{}': the constant's name is missing", text));
  char* end = nullptr;
  errno = 0;
  if (!number.empty()) out.value = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || errno == ERANGE || !std::isfinite(out.value)) {
    throw InputError(fmt::format("--constant {}: '{}' is not a finite number", out.name, number));
  }
  if (out.value < 0.0) {
    throw InputError(fmt::format("--constant {}: {} is negative; every model constant is a rate, fraction, time, "
                                 "size or count",
                                 out.name, number));
  }
  return out;
}

std::vector<ConstantSet> apply_constant_overrides(const std::vector<std::string>& texts, CostParameters& cost,
                                                  NcclParameters& nccl, InferenceCostParameters* inference) {
  std::vector<ConstantSet> applied;
  std::set<std::string> seen;
  for (const auto& text : texts) {
    const ConstantOverride o = parse_constant_override(text);
    if (!seen.insert(o.name).second) throw InputError(fmt::format("--constant {}: set twice", o.name));
    bool found = false;
    visit_constants(cost, nccl, inference, [&](std::string_view name, double& value) {
      if (name != o.name) return false;
      applied.push_back({o.name, value, o.value});
      value = o.value;
      found = true;
      return true;
    });
    if (!found) {
      std::vector<std::string> known;
      visit_constants(cost, nccl, inference, [&](std::string_view name, double&) {
        known.emplace_back(name);
        return false;
      });
      const std::string guess = closest_match(o.name, known);
      throw InputError(fmt::format("--constant {}: the model has no constant of that name{}", o.name,
                                   guess.empty() ? std::string("; `stepcast explain` lists the main ones in its "
                                                               "sensitivity table")
                                                 : "; did you mean '" + guess + "'?"));
    }
  }
  return applied;
}

std::string describe_constants_set(const std::vector<ConstantSet>& set) {
  std::string out;
  for (const auto& c : set) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{}={:g} (was {:g})", c.name, c.value, c.previous);
  }
  return out;
}

std::string constants_set_label(const std::vector<ConstantSet>& set) {
  return set.empty() ? std::string() : ", constants set by hand: " + describe_constants_set(set);
}

}  // namespace stepcast
