#pragma once
// The logits-sized kernels of the loss after the output layer, per CrossEntropyFusion
// (model/workload.h), as the code of each implementation runs them: every kernel's name (the op
// `stepcast explain --ops` lists) and the bytes it reads and writes per logit element of one
// tensor-parallel rank (T tokens x V/t vocabulary entries). Kernels that touch one value per
// token (the target gather, the row all-reduces' operands, the per-token loss) are left out:
// they are 1/(V/t) of a logits pass.
//
// `logit_bytes` is the format the output layer writes its logits in (2 for BF16/FP16 training,
// 4 for FP32/TF32). Sources, read per kernel in model/cross_entropy_kernels.cpp:
//   native   Megatron-Core's unfused vocab-parallel cross-entropy, eager PyTorch (Megatron-Core's
//            default, cross_entropy_loss_fusion False): 6 kernels forward (e + 36; its row max and
//            row sum are PyTorch reductions), 2 backward (12 + e).
//   fused    Megatron-Core's fused native path (cross_entropy_loss_fusion True, impl 'native'),
//            its steps compiled by torch.compile: 4 kernels forward (e + 28), 2 backward (16 + e).
//   te       Transformer Engine's Triton cross-entropy (impl 'te'): the gradient is written in
//            the forward over the logits, the backward scales it: 2 kernels forward (3 e),
//            1 backward (2 e).
//   pytorch  priced as native (model/workload.h).

#include <array>
#include <string_view>

#include "model/workload.h"

namespace stepcast {

struct CrossEntropyKernel {
  std::string_view name;     // static string, the op's name
  double read_bytes = 0.0;   // per logit element
  double write_bytes = 0.0;  // per logit element
  // A row reduction PyTorch runs natively (torch.max / torch.sum over the vocabulary): priced at
  // the reduction rate CostParameters::reduction_bytes_per_sm_clock was measured for (PyTorch's
  // own row reductions), not the elementwise one.
  bool reduction = false;
  [[nodiscard]] double bytes() const { return read_bytes + write_bytes; }
};

// The kernels of one pass (forward or backward), in launch order.
struct CrossEntropyPass {
  static constexpr int kCapacity = 6;
  std::array<CrossEntropyKernel, kCapacity> kernels{};
  int count = 0;

  [[nodiscard]] const CrossEntropyKernel* begin() const { return kernels.data(); }
  [[nodiscard]] const CrossEntropyKernel* end() const { return kernels.data() + count; }
  // Bytes moved per logit element by all the pass's kernels.
  [[nodiscard]] double bytes_per_logit() const;
};

CrossEntropyPass cross_entropy_forward_kernels(CrossEntropyFusion fusion, double logit_bytes);
CrossEntropyPass cross_entropy_backward_kernels(CrossEntropyFusion fusion, double logit_bytes);

}  // namespace stepcast
