#pragma once
// Copies parts of device buffers back to the host and decodes them to float, for checking
// outputs against the CPU references (validation/reference_ops.h).

#include <cstddef>
#include <vector>

#include "kernels/element_format.h"

namespace stepcast::harness {

// `count` elements starting at element `first`, `stride` elements apart.
std::vector<float> fetch(const void* base, kernels::ElementFormat format, std::size_t first, std::size_t count,
                         std::size_t stride = 1);

// `rows` rows of `cols` contiguous elements, consecutive rows `row_stride` elements apart,
// starting at element `first`; returned densely (rows x cols).
std::vector<float> fetch_rows(const void* base, kernels::ElementFormat format, std::size_t first, std::size_t rows,
                              std::size_t cols, std::size_t row_stride);

}  // namespace stepcast::harness
