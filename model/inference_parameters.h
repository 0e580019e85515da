#pragma once
// The empirical constants of the inference cost model that the training model does not already
// have, in one plain struct. The shared GEMM/attention/memory efficiencies, kernel gaps and host
// dispatch come from CostParameters (model/cost_parameters.h); these are the inference-only ones.
//
// Each constant carries its source; the ones marked "assumption" are reasoned estimates waiting
// for a calibration profile (issue 9). for_each_constant() visits them by name, like
// CostParameters, so explain's sensitivity table and calibration can enumerate them. Units are SI
// and part of the name where they are not ratios.

#include "model/named_constants.h"

namespace stepcast {

struct InferenceCostParameters : NamedConstants<InferenceCostParameters> {
  // --- Quantized GEMMs ---------------------------------------------------------------------------
  // Weight-only GEMMs (W8A16 / W4A16) dequantize every weight tile to 16 bits inside the main loop
  // before the tensor-core MMA. While memory-bound (small batches) this is hidden and the GEMM runs
  // at the narrow weights' byte rate; once compute-bound it costs issue slots. Marlin (Frantar et
  // al. 2024, arXiv:2408.11743, Sec. 3 and Fig. 1) keeps close to the FP16 rate only with careful
  // pipelining; the generic kernels of TensorRT-LLM (fpA_intB) and AWQ fall below it at large
  // batch. Assumption: 90% (INT8) and 80% (INT4) of the 16-bit GEMM rate; calibrate with harness
  // GEMMs at large m.
  double weight_only_int8_compute_factor = 0.90;
  double weight_only_int4_compute_factor = 0.80;
  // Group-wise scales of weight-only formats: one FP16 scale and one FP16 zero point per group of
  // 128 weights (AWQ, Lin et al. 2024, Sec. 5.1 "group size 128"; GPTQ's common setting):
  // 4 / 128 bytes per weight.
  double weight_only_scale_bytes_per_weight = 4.0 / 128.0;

  // --- Launch and runtime overheads ----------------------------------------------------------------
  // One cudaGraphLaunch replaying a whole step (CUDA graphs on): the host cost of submitting the
  // graph. Assumption (a few microseconds per launch on recent drivers, plus input staging).
  double graph_launch_s = 10.0e-6;
  // Host work per iteration outside the kernels: scheduling the batch, preparing inputs and block
  // tables, copying sampled tokens back. Assumption for a C++ runtime (TensorRT-LLM's batch
  // manager); Python engines spend more (vLLM's async scheduling hides part of it).
  double step_overhead_s = 0.2e-3;
  // Sampling over the vocabulary, per logit: cast to FP32 (write 4), softmax (read 4, write 4),
  // top-k/top-p or greedy selection (read 4). Assumption from the kernels' structure.
  double sampling_bytes_per_logit = 16.0;

  // --- Memory --------------------------------------------------------------------------------------
  // On a unified-memory device (Jetson) the GPU's memory is the system's LPDDR, shared with the OS
  // and the CPU side of the application. Assumption: 4 GiB kept for them (JetPack's desktop and
  // services take ~2-3 GiB).
  double unified_memory_reserve_bytes = 4.0 * 1024 * 1024 * 1024;

  // --- Host link (KV swap on preemption) -----------------------------------------------------------
  // Pinned cudaMemcpyAsync over PCIe sustains ~80% of the link rate (PCIe Gen4 x16: ~25 of 32 GB/s
  // in CUDA's bandwidthTest sample; assumption for other links).
  double host_link_eta = 0.80;

 private:
  friend struct NamedConstants<InferenceCostParameters>;
  template <class Self, class F>
  static void visit_constants(Self& self, F& f) {
    f("inference.weight_only_int8_compute_factor", self.weight_only_int8_compute_factor,
      "assumption; Marlin (Frantar et al. 2024) Sec. 3");
    f("inference.weight_only_int4_compute_factor", self.weight_only_int4_compute_factor,
      "assumption; Marlin (Frantar et al. 2024) Sec. 3");
    f("inference.weight_only_scale_bytes_per_weight", self.weight_only_scale_bytes_per_weight,
      "AWQ (Lin et al. 2024) group size 128, FP16 scale + zero");
    f("inference.graph_launch_s", self.graph_launch_s, "assumption");
    f("inference.step_overhead_s", self.step_overhead_s, "assumption (C++ runtime)");
    f("inference.sampling_bytes_per_logit", self.sampling_bytes_per_logit, "assumption (kernel structure)");
    f("inference.unified_memory_reserve_bytes", self.unified_memory_reserve_bytes, "assumption (JetPack)");
    f("inference.host_link_eta", self.host_link_eta, "CUDA bandwidthTest, PCIe Gen4 x16");
  }
};

}  // namespace stepcast
