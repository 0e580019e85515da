#include "validation/fp8_gemm_configurations.h"

namespace stepcast {

std::vector<Fp8GemmConfiguration> fp8_gemm_configurations(const std::string& requested_output) {
  std::vector<Fp8GemmConfiguration> list;
  Fp8GemmConfiguration base;
  base.output = requested_output;
  list.push_back(base);  // 1. PyTorch's scaled_gemm

  Fp8GemmConfiguration fast = base;  // 2. Transformer Engine's forward GEMMs
  fast.fast_accumulation = true;
  list.push_back(fast);

  Fp8GemmConfiguration aliased = base;  // 3. Transformer Engine's C = D
  aliased.c_is_d = true;
  list.push_back(aliased);

  Fp8GemmConfiguration unscaled = base;  // 4. no scale pointers (cuBLASLt's default 1.0)
  unscaled.scale_pointers = false;
  list.push_back(unscaled);

  for (const char* other : {"fp16", "fp32"}) {  // 5, 6. the other documented output formats
    if (requested_output == other) continue;
    Fp8GemmConfiguration c = base;
    c.output = other;
    list.push_back(c);
  }
  return list;
}

std::string describe(const Fp8GemmConfiguration& c) {
  std::string s = "D " + c.output + ", C " + c.output + (c.c_is_d ? " = D" : " = nullptr") + " (beta 0), ";
  s += c.scale_pointers ? "A/B scale pointers (1.0)" : "no scale pointers";
  s += c.fast_accumulation ? ", fast accumulation on" : ", fast accumulation off";
  return s;
}

}  // namespace stepcast
