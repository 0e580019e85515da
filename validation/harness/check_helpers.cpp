#include "validation/harness/check_helpers.h"

#include <algorithm>

namespace stepcast::harness {

CheckInfo to_check(const Comparison& c, const std::string& method, double tolerance) {
  CheckInfo info;
  info.passed = c.passed();
  info.method = method;
  info.checked = c.checked;
  info.max_abs_error = c.max_abs_error;
  info.max_rel_error = c.max_rel_error;
  info.tolerance = tolerance;
  return info;
}

std::vector<std::int64_t> sample_indices(std::int64_t n, int count) {
  std::vector<std::int64_t> out;
  if (n <= 0) return out;
  if (count <= 1 || n == 1) return {0};
  for (int i = 0; i < count; ++i) {
    // Spread over [0, n - 1], with an odd stride so rows of different residues are hit.
    out.push_back(static_cast<std::int64_t>(static_cast<double>(i) * static_cast<double>(n - 1) / (count - 1)));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace stepcast::harness
