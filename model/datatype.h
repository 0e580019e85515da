#pragma once
// Numeric formats the model knows: their storage size and their names in scenario files.
//
// A DataType names how a tensor is stored or how a GEMM consumes its inputs. TF32 is a compute
// mode over FP32 storage (4 bytes). FP8 covers E4M3 and E5M2 (1 byte each; the harness measures
// both). MXFP8 and NVFP4 are Blackwell block-scaled formats; their per-element size includes the
// shared scale (MXFP8: 8 bits + one E8M0 scale per 32 elements; NVFP4: 4 bits + one E4M3 scale
// per 16 elements), per the OCP Microscaling Formats v1.0 spec and NVIDIA's Blackwell docs.

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace stepcast {

enum class DataType : std::uint8_t { fp32, tf32, fp16, bf16, fp8, int8, int4, mxfp8, nvfp4 };

inline constexpr std::array<DataType, 9> kAllDataTypes = {
    DataType::fp32, DataType::tf32, DataType::fp16, DataType::bf16, DataType::fp8,
    DataType::int8, DataType::int4, DataType::mxfp8, DataType::nvfp4};
inline constexpr std::size_t kDataTypeCount = kAllDataTypes.size();

constexpr std::size_t index_of(DataType t) { return static_cast<std::size_t>(t); }

// Bytes each element occupies in memory, including block scales where the format has them.
constexpr double bytes_per_element(DataType t) {
  switch (t) {
    case DataType::fp32: return 4.0;
    case DataType::tf32: return 4.0;
    case DataType::fp16: return 2.0;
    case DataType::bf16: return 2.0;
    case DataType::fp8: return 1.0;
    case DataType::int8: return 1.0;
    case DataType::int4: return 0.5;
    case DataType::mxfp8: return 1.0 + 1.0 / 32.0;  // OCP MX v1.0: one E8M0 scale per 32
    case DataType::nvfp4: return 0.5 + 1.0 / 16.0;  // one E4M3 scale per 16 elements
  }
  return 4.0;
}

// Bytes of one element's own value, without block scales: what a row of the data tensor strides
// by. MXFP8 and NVFP4 keep their scales in a separate tensor (cuBLASLt takes them through
// CUBLASLT_MATMUL_DESC_A_SCALE_POINTER / B_SCALE_POINTER with the VEC32_UE8M0 / VEC16_UE4M3 scale
// modes; OCP MX v1.0 Sec. 5 stores a block as its scale plus the k elements), so stride and TMA
// alignment rules see 1 byte (MXFP8) and half a byte (NVFP4) per element.
constexpr double value_bytes_per_element(DataType t) {
  switch (t) {
    case DataType::mxfp8: return 1.0;
    case DataType::nvfp4: return 0.5;
    default: return bytes_per_element(t);
  }
}

// GEMM input formats that Transformer Engine quantizes to from 16-bit tensors in training.
constexpr bool is_quantized_training_format(DataType t) {
  return t == DataType::fp8 || t == DataType::mxfp8 || t == DataType::nvfp4;
}

// The spelling used in scenario files, reports and catalogs.
constexpr std::string_view to_string(DataType t) {
  switch (t) {
    case DataType::fp32: return "fp32";
    case DataType::tf32: return "tf32";
    case DataType::fp16: return "fp16";
    case DataType::bf16: return "bf16";
    case DataType::fp8: return "fp8";
    case DataType::int8: return "int8";
    case DataType::int4: return "int4";
    case DataType::mxfp8: return "mxfp8";
    case DataType::nvfp4: return "nvfp4";
  }
  return "?";
}

constexpr std::optional<DataType> parse_datatype(std::string_view s) {
  for (DataType t : kAllDataTypes) {
    if (to_string(t) == s) return t;
  }
  return std::nullopt;
}

}  // namespace stepcast
