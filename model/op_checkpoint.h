#pragma once
// torchtitan's per-op selective activation checkpointing (parallel.recompute: selective_op).
//
// The policy (pytorch/torchtitan torchtitan/parallelisms/parallelize_llama.py, commit 004b3148,
// `_save_list` and `_apply_ac_to_transformer_block` with selective_ac_option "op"; the policy the
// benchmarks of benchmarks/llama3_h100_202412_torchtitan.md @31a17bfd, Tables 1 and 3, ran): each
// TransformerBlock runs under torch.utils.checkpoint with a selective-checkpoint context whose
// policy MUST_SAVEs the outputs of the ops in _save_list -- aten.mm, the flash and efficient SDPA
// kernels, the functional reduce-scatter -- except every second aten.mm of the block (a per-block
// counter, `mm_count % 2 == 0` is recomputed), and PREFER_RECOMPUTEs everything else. In backward
// the block's forward is replayed: saved outputs come from the cache, every other op runs again.
//
// The mm order is the forward's call order in torchtitan/models/llama/model.py (Attention.forward:
// `self.wq(x), self.wk(x), self.wv(x)`, then SDPA, then `self.wo`; FeedForward.forward:
// `self.w2(F.silu(self.w1(x)) * self.w3(x))`, w1 before w3): wq 1 saved, wk 2 recomputed, wv 3
// saved, wo 4 recomputed, w1 5 saved, w3 6 recomputed, w2 7 saved. A two-matrix MLP (fc1, fc2)
// saves fc1 (5) and recomputes fc2 (6). nn.Linear without bias on a 3-D input reaches the
// dispatcher as aten.mm (linear -> matmul -> mm); with Float8Linear the mm reaches the
// checkpoint's dispatch mode before Float8Tensor's own dispatch turns it into _scaled_mm, so the
// count and the saved (16-bit) outputs are the same, and the FP8 casts of the GEMM inputs re-run.
//
// Scope: dense GQA/MHA blocks without linear bias (torchtitan's Llama block); the loader rejects
// MoE, MLA and biased linears (a biased nn.Linear is aten.addmm, which the policy neither counts
// nor saves). selective_op_applies() is that rule, the one place it is written: the loader, the
// sweep's `recompute: auto`, explain's changes and the layout search all ask it.

#include "model/layer_shape.h"
#include "model/op.h"
#include "model/units.h"

namespace stepcast {

// Whether the policy is priced for this model: no MoE layers, no multi-latent attention, no
// linear bias.
bool selective_op_applies(const TransformerSpec& model);

// One GEMM of the block in call order, and whether the policy keeps its output.
struct CheckpointedMm {
  const char* name;    // "wq", "wk", ...
  double out_width;    // output columns on one TP rank
  double in_width;     // reduction width on one TP rank
  bool saved;          // odd position in the block's mm count
};
inline constexpr int kMaxBlockMms = 7;
struct BlockMms {
  CheckpointedMm mm[kMaxBlockMms];
  int count = 0;
};
BlockMms selective_op_block_mms(const LayerShape& shape);

// Bytes one layer keeps between its forward and its backward under the policy: the block input
// (the checkpoint's argument, a sequence-parallel shard with SP), the saved mm outputs, the flash
// kernel's output and FP32 logsumexp (the efficient/flash SDPA ops are in the save list; an unfused
// attention keeps nothing), and with TP the two reduce-scatter outputs (attention and MLP).
Bytes selective_op_saved_bytes(const LayerShape& shape);

// The forward kernels replayed before a layer's backward: every forward op of the layer except
// the saved GEMMs and the flash attention kernel, i.e. the recomputed GEMMs (wk, wo, w3 for
// SwiGLU), the norms, RoPE, repeat_kv, the activation, the residual adds and the FP8 casts.
OpList selective_op_recompute_forward_ops(const LayerShape& shape);

}  // namespace stepcast
