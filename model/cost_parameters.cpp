#include "model/cost_parameters.h"

#include <cassert>

#include "model/triton_attention.h"

namespace stepcast {

double CostParameters::gemm_eta(GpuArchitecture arch, DataType compute) const {
  switch (compute) {
    case DataType::mxfp8:
      return gemm_eta_fp8 * gemm_mxfp8_over_fp8;
    case DataType::fp8:
    case DataType::nvfp4:
    case DataType::int4:
      return gemm_eta_fp8;
    case DataType::int8:
      return gemm_eta_int8;
    case DataType::tf32:
      return gemm_eta_tf32;
    case DataType::fp32:
      return gemm_eta_fp32_simt;
    case DataType::fp16:
    case DataType::bf16:
      break;
  }
  switch (arch) {
    case GpuArchitecture::ampere: return gemm_eta_ampere_16bit;
    case GpuArchitecture::ada: return gemm_eta_ada_16bit;
    case GpuArchitecture::hopper: return gemm_eta_hopper_16bit;
    case GpuArchitecture::blackwell: return gemm_eta_blackwell_16bit;
    case GpuArchitecture::cdna3: return gemm_eta_cdna3_16bit;
  }
  return gemm_eta_hopper_16bit;
}

double CostParameters::sustained_fraction(const GpuSpec& gpu) const {
  if (!sustained_clocks) return 1.0;
  if (gpu.sustained_clock_fraction > 0.0) return gpu.sustained_clock_fraction;
  return gpu.architecture == GpuArchitecture::blackwell ? sustained_derate_blackwell : sustained_derate;
}

CostParameters CostParameters::burst() const {
  CostParameters out = *this;
  out.sustained_derate = 1.0;
  out.sustained_derate_blackwell = 1.0;
  out.sustained_clocks = false;
  return out;
}

namespace {

// A flash eta by generation: Ampere's figure also serves Ada, Blackwell has its own, and Hopper's
// serves Hopper and CDNA3 (no CDNA3 flash measurement).
double flash_eta_of(GpuArchitecture arch, double ampere, double hopper, double blackwell) {
  switch (arch) {
    case GpuArchitecture::ampere:
    case GpuArchitecture::ada: return ampere;
    case GpuArchitecture::blackwell: return blackwell;
    case GpuArchitecture::hopper:
    case GpuArchitecture::cdna3: break;
  }
  return hopper;
}

// FlashAttention-2's speed over the generation's best kernel: 1 where the best is FlashAttention-2
// (Ampere, Ada), the measured ratio on Hopper.
double flash2_ratio(GpuArchitecture arch, double hopper_ratio) {
  assert(flash2_priced(arch));
  return arch == GpuArchitecture::hopper ? hopper_ratio : 1.0;
}

// One pass's efficiency with `kernel`, from the generation's best kernel's (`best`): FlashAttention-2
// at its ratio to the best, llm-foundry's Triton kernel at its ratio to FlashAttention-2
// (model/triton_attention.h). The forward and the backward differ only in the three figures.
double kernel_eta(AttentionKernel kernel, GpuArchitecture arch, double best, double flash2_hopper_ratio,
                  double triton_over_flash2) {
  switch (kernel) {
    case AttentionKernel::best: break;
    case AttentionKernel::flash2: return best * flash2_ratio(arch, flash2_hopper_ratio);
    case AttentionKernel::triton: return best * flash2_ratio(arch, flash2_hopper_ratio) * triton_over_flash2;
  }
  return best;
}

}  // namespace

bool flash2_priced(GpuArchitecture arch) {
  switch (arch) {
    case GpuArchitecture::ampere:
    case GpuArchitecture::ada:
    case GpuArchitecture::hopper: return true;
    case GpuArchitecture::blackwell:
    case GpuArchitecture::cdna3: break;
  }
  return false;
}

double CostParameters::flash_forward_eta(GpuArchitecture arch, AttentionKernel kernel) const {
  return kernel_eta(kernel, arch, flash_eta_of(arch, flash_fwd_eta_ampere, flash_fwd_eta_hopper, flash_fwd_eta_blackwell),
                    flash2_fwd_ratio_hopper, kTritonForwardOverFlash2);
}

double CostParameters::flash_backward_eta(GpuArchitecture arch, AttentionKernel kernel) const {
  return kernel_eta(kernel, arch, flash_eta_of(arch, flash_bwd_eta_ampere, flash_bwd_eta_hopper, flash_bwd_eta_blackwell),
                    flash2_bwd_ratio_hopper, kTritonBackwardOverFlash2);
}

double CostParameters::flash_softmax_hidden(GpuArchitecture arch) const {
  return arch == GpuArchitecture::blackwell ? flash_softmax_hidden_fraction_blackwell : flash_softmax_hidden_fraction;
}

double CostParameters::deepep_nvlink_eta(GpuArchitecture arch) const {
  return arch == GpuArchitecture::blackwell ? deepep_nvlink_eta_blackwell : deepep_nvlink_eta_hopper;
}

}  // namespace stepcast
