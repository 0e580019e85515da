#pragma once
// Element formats of device buffers, as the harness's kernels and GEMMs see them. Plain C++ so
// host code can use it without CUDA headers.

#include <cstddef>
#include <optional>
#include <string_view>

namespace stepcast::kernels {

enum class ElementFormat { fp32, fp16, bf16, e4m3, e5m2, int8, int32 };

constexpr std::size_t element_size(ElementFormat f) {
  switch (f) {
    case ElementFormat::fp32: return 4;
    case ElementFormat::fp16: return 2;
    case ElementFormat::bf16: return 2;
    case ElementFormat::e4m3: return 1;
    case ElementFormat::e5m2: return 1;
    case ElementFormat::int8: return 1;
    case ElementFormat::int32: return 4;
  }
  return 4;
}

constexpr std::string_view to_string(ElementFormat f) {
  switch (f) {
    case ElementFormat::fp32: return "fp32";
    case ElementFormat::fp16: return "fp16";
    case ElementFormat::bf16: return "bf16";
    case ElementFormat::e4m3: return "e4m3";
    case ElementFormat::e5m2: return "e5m2";
    case ElementFormat::int8: return "int8";
    case ElementFormat::int32: return "int32";
  }
  return "?";
}

constexpr std::optional<ElementFormat> parse_element_format(std::string_view s) {
  for (ElementFormat f : {ElementFormat::fp32, ElementFormat::fp16, ElementFormat::bf16, ElementFormat::e4m3,
                          ElementFormat::e5m2, ElementFormat::int8, ElementFormat::int32}) {
    if (to_string(f) == s) return f;
  }
  return std::nullopt;
}

}  // namespace stepcast::kernels
