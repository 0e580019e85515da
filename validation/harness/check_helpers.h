#pragma once
// Small helpers the suites share to turn comparisons into CheckInfo and to pick sample indices.

#include <cstdint>
#include <string>
#include <vector>

#include "validation/measurement.h"
#include "validation/reference_ops.h"

namespace stepcast::harness {

CheckInfo to_check(const Comparison& c, const std::string& method, double tolerance);

// `count` distinct indices in [0, n): the first, the last, and evenly spread ones between.
std::vector<std::int64_t> sample_indices(std::int64_t n, int count);

}  // namespace stepcast::harness
