#include "model/cross_entropy_kernels.h"

#include <initializer_list>

namespace stepcast {

namespace {

// Which kernels run: Megatron-Core's LanguageModule.compute_language_model_loss
// (NVIDIA/Megatron-LM megatron/core/models/common/language_module/language_module.py, code-index
// id 634896012) calls tensor_parallel.vocab_parallel_cross_entropy unless
// config.cross_entropy_loss_fusion; with it, fused_vocab_parallel_cross_entropy for
// cross_entropy_fusion_impl 'native' and te_parallel_cross_entropy for 'te'
// (ModelParallelConfig defaults: fusion False, impl 'native', megatron/core/model_parallel_config.py
// @02aa3ee4).

CrossEntropyPass pass(std::initializer_list<CrossEntropyKernel> kernels) {
  CrossEntropyPass p;
  for (const CrossEntropyKernel& k : kernels) p.kernels[static_cast<std::size_t>(p.count++)] = k;
  return p;
}

// Megatron-Core's unfused path, eager PyTorch, one kernel per tensor op
// (megatron/core/tensor_parallel/cross_entropy.py @00611e6e, code-index id 54683265867,
// VocabParallelCrossEntropy): calculate_logits_max casts to FP32 (`.float()`: read e, write 4)
// and takes the row max (read 4); calculate_predicted_logits subtracts it in place (read 4,
// write 4) and runs torch.exp(out=) in place (read 4, write 4), then sums the rows (read 4);
// calculate_cross_entropy_loss divides in place by the all-reduced sum to keep the softmax for
// the backward (read 4, write 4). Six kernels, e + 36 bytes per logit. (Until this count stepcast
// priced them as one op of e + 32: its comment listed the same six steps and summed them 4 short.)
CrossEntropyPass native_forward(double e) {
  return pass({{"cross_entropy.cast", e, 4.0},
               {"cross_entropy.max", 4.0, 0.0, true},
               {"cross_entropy.subtract_max", 4.0, 4.0},
               {"cross_entropy.exp", 4.0, 4.0},
               {"cross_entropy.sum", 4.0, 0.0, true},
               {"cross_entropy.normalize", 4.0, 4.0}});
}

// Backward (calculate_gradients): the target entries' scatter touches one value per token; the
// softmax is scaled in place by the loss gradient (grad_input.mul_: read 4, write 4); the FP32
// gradient of a 16-bit input is cast to the input's format by autograd before the output layer's
// backward (read 4, write e). 12 + e, two kernels.
CrossEntropyPass native_backward(double e) {
  return pass({{"cross_entropy.backward.scale", 4.0, 4.0}, {"cross_entropy.backward.cast", 4.0, e}});
}

// Megatron-Core's fused native path (megatron/core/fusions/fused_cross_entropy.py @d086a2e3,
// code-index id 363221512): the same steps, each function under jit_fuser, which is torch.compile
// from PyTorch 2.2 (megatron/core/jit.py). calculate_logits_max is one Inductor reduction that
// writes the FP32 copy as it takes the max (read e, write 4). calculate_predicted_logits
// subtracts, exponentiates in place and sums the rows in one graph; Inductor keeps an input
// mutation in place only when pointwise ops alone consume it, so with the row sum it writes
// exp(x - max) into a fresh logits-sized buffer as it sums (read 4, write 4) and copies that
// back into the input (read 4, write 4) — Megatron-LM's own account of these graphs, in the
// note the same file carries at @0cb4a9c8 (code-index id 68442537025), which later splits them
// for that reason ("a full logits-sized transient allocation plus an extra read/write pass").
// calculate_cross_entropy_loss divides in place, pointwise only (read 4, write 4). e + 28.
CrossEntropyPass fused_forward(double e) {
  return pass({{"cross_entropy.cast_max", e, 4.0},
               {"cross_entropy.exp_sum", 4.0, 4.0},
               {"cross_entropy.copy_back", 4.0, 4.0},
               {"cross_entropy.normalize", 4.0, 4.0}});
}

// Backward: calculate_gradients compiles the target scatter into the saved softmax with the
// in-place scaling and the cast to BF16; the scatter makes Inductor copy the softmax into a fresh
// buffer first (read 4, write 4), then one pointwise kernel reads it (4), writes the 16-bit
// gradient (e) and the scaled values back into the saved input (4). 16 + e.
CrossEntropyPass fused_backward(double e) {
  return pass({{"cross_entropy.backward.clone", 4.0, 4.0}, {"cross_entropy.backward.scale_cast", 4.0, e + 4.0}});
}

// Transformer Engine's parallel cross-entropy (transformer_engine/pytorch/triton/cross_entropy.py
// @1b2b4a8e, code-index id 4704535401; CrossEntropyFunction in transformer_engine/pytorch/
// cross_entropy.py @dec0154e), one Triton program per token row, FP32 math on the 16-bit logits:
// online_softmax_kernel reads the row once for its max and sum (read e); cross_entropy_kernel
// reads it again and overwrites it in place with the gradient softmax - onehot (read e, write e).
// 3 e per logit; the overwritten logits are what the backward keeps.
CrossEntropyPass te_forward(double e) {
  return pass({{"cross_entropy.online_softmax", e, 0.0}, {"cross_entropy.loss_and_grad", e, e}});
}

// Backward: element_mul_kernel scales the kept gradient in place by the loss gradient (read e,
// write e). It is skipped only when grad_output equals the scalar 1.0; Megatron asks for the
// per-token loss (megatron/core/extensions/transformer_engine.py te_parallel_cross_entropy:
// reduce_loss False), so its grad_output is a per-token tensor and the kernel runs. 2 e.
CrossEntropyPass te_backward(double e) { return pass({{"cross_entropy.backward.scale", e, e}}); }

}  // namespace

double CrossEntropyPass::bytes_per_logit() const {
  double sum = 0.0;
  for (const CrossEntropyKernel& k : *this) sum += k.bytes();
  return sum;
}

CrossEntropyPass cross_entropy_forward_kernels(CrossEntropyFusion fusion, double logit_bytes) {
  switch (fusion) {
    case CrossEntropyFusion::fused: return fused_forward(logit_bytes);
    case CrossEntropyFusion::te: return te_forward(logit_bytes);
    case CrossEntropyFusion::native:
    case CrossEntropyFusion::pytorch: break;
  }
  return native_forward(logit_bytes);
}

CrossEntropyPass cross_entropy_backward_kernels(CrossEntropyFusion fusion, double logit_bytes) {
  switch (fusion) {
    case CrossEntropyFusion::fused: return fused_backward(logit_bytes);
    case CrossEntropyFusion::te: return te_backward(logit_bytes);
    case CrossEntropyFusion::native:
    case CrossEntropyFusion::pytorch: break;
  }
  return native_backward(logit_bytes);
}

}  // namespace stepcast
