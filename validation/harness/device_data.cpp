#include "validation/harness/device_data.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>

#include "kernels/cuda_check.h"
#include "validation/float_formats.h"

namespace stepcast::harness {

namespace {

std::vector<float> decode(const std::vector<unsigned char>& raw, kernels::ElementFormat format, std::size_t count) {
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    const unsigned char* p = raw.data() + i * kernels::element_size(format);
    switch (format) {
      case kernels::ElementFormat::fp32: std::memcpy(&out[i], p, 4); break;
      case kernels::ElementFormat::fp16: {
        std::uint16_t bits = 0;
        std::memcpy(&bits, p, 2);
        out[i] = half_to_float(bits);
        break;
      }
      case kernels::ElementFormat::bf16: {
        std::uint16_t bits = 0;
        std::memcpy(&bits, p, 2);
        out[i] = bfloat16_to_float(bits);
        break;
      }
      case kernels::ElementFormat::e4m3: out[i] = e4m3_to_float(*p); break;
      case kernels::ElementFormat::e5m2: out[i] = e5m2_to_float(*p); break;
      case kernels::ElementFormat::int8: out[i] = static_cast<float>(static_cast<std::int8_t>(*p)); break;
      case kernels::ElementFormat::int32: {
        std::int32_t v = 0;
        std::memcpy(&v, p, 4);
        out[i] = static_cast<float>(v);
        break;
      }
    }
  }
  return out;
}

}  // namespace

std::vector<float> fetch(const void* base, kernels::ElementFormat format, std::size_t first, std::size_t count,
                         std::size_t stride) {
  const std::size_t size = kernels::element_size(format);
  std::vector<unsigned char> raw(count * size);
  const auto* src = static_cast<const unsigned char*>(base) + first * size;
  if (count > 0) {
    STEPCAST_CUDA(cudaMemcpy2D(raw.data(), size, src, stride * size, size, count, cudaMemcpyDeviceToHost));
  }
  return decode(raw, format, count);
}

std::vector<float> fetch_rows(const void* base, kernels::ElementFormat format, std::size_t first, std::size_t rows,
                              std::size_t cols, std::size_t row_stride) {
  const std::size_t size = kernels::element_size(format);
  std::vector<unsigned char> raw(rows * cols * size);
  const auto* src = static_cast<const unsigned char*>(base) + first * size;
  if (rows > 0 && cols > 0) {
    STEPCAST_CUDA(cudaMemcpy2D(raw.data(), cols * size, src, row_stride * size, cols * size, rows, cudaMemcpyDeviceToHost));
  }
  return decode(raw, format, rows * cols);
}

}  // namespace stepcast::harness
