#include "model/moe_ops.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <vector>

#include "model/layer_ops.h"
#include "model/op_builders.h"

namespace stepcast {
namespace {

using ops::gemm;
using ops::data_movement_op;
using ops::memory_op;
using ops::push_gemm_backward;
using ops::reduction_op;

// Router logits and probabilities: Megatron keeps the top-k scores in FP32.
constexpr double kRouterProbabilityBytes = 4.0;

Op router_gemm(std::string_view name, const LayerShape& s, double m, double n, double k, double out = 0.0) {
  // The router runs in 16 bits in FP8 training (Transformer Engine leaves it out of FP8 autocast).
  LayerShape sixteen = s;
  sixteen.compute = ops::attention_dtype(s);
  return gemm(name, sixteen, m, n, k, 1.0, out);
}

bool grouped(const LayerShape& s) { return s.moe_grouped_gemm == MoeGroupedGemm::grouped; }

// The all-to-all dispatcher's sort of the received chunks by expert (and its inverse before the
// combine): only that dispatcher, over EP, with several local experts (model/moe_ops.h).
bool sorts_chunks(const LayerShape& s, const MoeRouting& r) {
  return s.ep_dispatcher == ExpertDispatcher::alltoall && s.ep > 1 && r.local_experts > 1.0;
}
// Whether the permute and unpermute run as kernels of their own: not with HybridEP over EP, whose
// dispatch and combine kernels do them (model/moe_ops.h).
bool permutes_separately(const LayerShape& s) { return !(s.ep_dispatcher == ExpertDispatcher::hybridep && s.ep > 1); }

// Whether the routed experts run Transformer Engine's fused grouped MLP (TE PR #2769, "GEMM +
// SwiGLU fused grouped MLP for MXFP8"; transformer_engine/pytorch/ops/fused/grouped_mlp.py, the
// fused forward and backward over GroupedLinear -> ScaledSwiGLU -> GroupedLinear, which
// Megatron-Core's TEGroupedMLP builds under use_transformer_engine_op_fuser and Megatron-Bridge's
// 26.06 recipes turn on with cutedsl_fused_grouped_mlp / NVTE_CUTEDSL_FUSED_GROUPED_MLP=1). TE
// fuses it for the MXFP8 recipe on SM100 (MXFP8 training implies Blackwell here) with a gated
// SwiGLU activation. NVFP4 also runs the fused activation there, but quantizes FC2's input in a
// separate group_quantize kernel; this model leaves NVFP4 on the unfused grouped pricing.
bool fused_grouped_mlp(const LayerShape& s) {
  return grouped(s) && s.compute == DataType::mxfp8 && s.mlp == MlpKind::swiglu;
}

// The fused FC1 kernel's epilogue (grouped_mlp.py fused forward, the cuDNN
// grouped_gemm_activation kernel with d_dtype float8_e4m3fn and discrete_col_sfd): besides FC1's
// 16-bit output (c_tensor, kept for the backward as the activation's input), it applies SwiGLU and
// the router probabilities (prob_tensor) and writes FC2's input already quantized to MXFP8,
// row-wise (d_tensor) and column-wise (d_col_tensor, for FC2's weight gradient), each with one
// E8M0 scale per 32 elements: 2 (1 + 1/32) bytes per SwiGLU output element.
constexpr double kMxfp8RowAndColumnBytesPerElement = 2.0 * (1.0 + 1.0 / 32.0);

// The experts' GEMMs (Op::launches; model/op_time.h prices the launches):
//   per_expert  Transformer Engine's GroupedLinear, one cuBLAS GEMM per local expert, over the
//               grouped-GEMM streams: `experts` launches
//   grouped     one grouped kernel over all local experts with on-device group sizes (TE >= 2.14:
//               general_grouped_gemm_for_grouped_tensor, TE PRs #2748 / #2669; the cuDNN CuTe DSL
//               grouped kernels of the fused MLP): one launch whose tiles are every expert's tiles
//               (the batch of `experts` products), quantized into waves together. The cuBLASLt
//               path (unfused: BF16, or no SwiGLU) also runs a small setup kernel per GEMM that
//               turns the device offsets into pointer arrays (TE PR #2502 nvte_grouped_gemm,
//               setup_grouped_gemm_kernel); it moves a few bytes per expert and is not priced
Op grouped_gemm(std::string_view name, const LayerShape& s, double m, double n, double k, double experts,
                double out = 0.0) {
  Op op = gemm(name, s, m, n, k, experts, out);
  op.launches = grouped(s) ? 1.0 : experts;
  return op;
}
// `dgrad_out`: bytes per data-gradient output element (0: the activation format).
void push_grouped_gemm_backward(OpList& ops, std::string_view dgrad, std::string_view wgrad, const LayerShape& s,
                                double m, double n, double k, double experts, double dgrad_out = 0.0) {
  ops.push(grouped_gemm(dgrad, s, m, k, n, experts, dgrad_out));
  Op w = grouped_gemm(wgrad, s, k, n, m, experts, ops::main_grad_accumulate_bytes(s));
  w.gemm.leading = ops::weight_gradient_leading(s.compute);
  ops.push(w);
}

// FP8 training quantizes each expert's inputs to its GEMMs (GroupedLinear splits the permuted
// tokens by expert and quantizes each split: TE's split_quantize, one kernel per expert and
// tensor): FC1's input (rows x h) and FC2's (rows x expert width) in the forward; FC2's and FC1's
// output gradients in the backward (and, for FP8, the transposes of the saved inputs), priced per
// element as the dense layers' casts (model/layer_ops.h quantize_bytes_per_element).
//
// With grouped GEMMs each tensor is quantized by one kernel over all experts, the group sizes on
// the device (tex.group_quantize in grouped_mlp.py): 2 launches instead of 2 per expert. The fused
// grouped MLP quantizes FC2's input in FC1's epilogue and FC1's output gradient in FC2's
// data-gradient epilogue (grouped_mlp.py: d_tensor / d_col_tensor of both fused kernels), so only
// FC1's input (forward) and FC2's output gradient (backward) are cast: one kernel each.
Op expert_cast(std::string_view name, const LayerShape& s, const MoeRouting& r, bool backward) {
  const double gated = s.mlp == MlpKind::swiglu ? 2.0 : 1.0;
  const bool fused = fused_grouped_mlp(s);
  const double ffn_inputs = fused ? 0.0 : r.expert_ffn;
  const double inputs = r.rows * (s.hidden + ffn_inputs);
  double bytes = 0.0;
  if (!backward) {
    bytes = inputs * quantize_bytes_per_element(s.compute, s.fp8_scaling, s.compute != DataType::fp8);
  } else {
    const double outputs = r.rows * (s.hidden + gated * ffn_inputs);
    bytes = backward_cast_bytes(s, outputs, inputs);
  }
  Op op = memory_op(name, bytes);
  op.launches = fused ? 1.0 : grouped(s) ? 2.0 : 2.0 * r.local_experts;
  return op;
}

// FP8 training pads each local expert's rows to the quantized GEMMs' alignment: Megatron-Core's
// TEGroupedMLP runs Transformer Engine's Fp8Padding on the permuted tokens (and their router
// probabilities) before FC1 and Fp8Unpadding on FC2's output (megatron/core/transformer/moe/
// experts.py; transformer_engine/pytorch/module/fp8_padding.py, fp8_unpadding.py): a copy of every
// row into a buffer with each expert's rows rounded up (fused_multi_row_padding), and the copy
// back (split + cat); the backward runs the conjugate copies. Fp8Padding returns its input
// untouched only when every expert's count is already aligned, which dropless routing does not
// give (each expert's count is whatever the router sent, forced-balanced benchmarks included: random
// logits); Megatron's moe_router_padding_for_fp8 (off by default) pads in the router instead.
// Alignment: 32 rows for MXFP8, 16 otherwise (Fp8Padding's align_size).
constexpr double kQuantizedRowAlignment = 16.0;
constexpr double kMxfp8RowAlignment = 32.0;
constexpr double kFp8PaddingForwardKernels = 2.0;  // the tokens' and the probabilities' padding

//
// Grouped GEMMs do not run Fp8Padding: Megatron-Core's GroupedTensor path
// (moe_use_grouped_tensor, which use_transformer_engine_op_fuser implies) takes padded expert
// segments from the permutation with their offsets on the device (experts.py TEGroupedMLP
// _fused_forward; TE tex.splits_to_offsets_multi, the kernels' padded_offsets), so the separate
// copies go; the padding rows the permutation writes (under one alignment's worth of rows per
// expert) are left out.
bool pads_expert_rows(const LayerShape& s, const MoeRouting& r) {
  if (!is_quantized_training_format(s.compute) || grouped(s)) return false;
  if (s.moe.capacity_factor <= 0.0) return true;  // dropless: counts as routed
  const double align = s.compute == DataType::mxfp8 ? kMxfp8RowAlignment : kQuantizedRowAlignment;
  return std::fmod(r.expert_rows, align) != 0.0;  // capacity mode: every expert holds expert_rows
}
// One copy of the local experts' rows, read and written at the activation width.
double expert_rows_copy_bytes(const LayerShape& s, const MoeRouting& r) {
  return r.rows * s.hidden * 2.0 * s.activation_bytes;
}

// Experts with biases (GPT-OSS: add_bias_linear) get FC2's bias outside the grouped GEMM:
// TEGroupedMLP takes FC2's per-expert biases back unapplied and adds them weighted by each row's
// router probability (the activation already weighted FC2's input), in PyTorch per expert:
// `cat([t + b * p for each expert's rows t, bias b, probabilities p]).to(dtype)`
// (megatron/core/transformer/moe/experts.py TEGroupedMLP._apply_bias). With 16-bit rows and FP32
// probabilities, per element of the rows x h output (PyTorch type promotion makes b * p FP32):
//   forward   b * p writes 4; t + (b p) reads 2 + 4, writes 4; cat reads 4, writes 4; .to reads 4,
//             writes 2                                                                     = 28
//   backward  .to's backward reads 2, writes 4; the add's gradient for t cast to 16 bits reads 4,
//             writes 2; the product's gradients for b and p each multiply (read 4, write 4) and
//             reduce (read 4) (cat's backward only slices)                                   = 36
// Kernels: per expert the product and the sum (forward), the cast and two multiply-reduce pairs
// (backward); once the cat and the cast (forward) and the cast (backward).
constexpr double kExpertBiasForwardBytesPerElement = 28.0;
constexpr double kExpertBiasBackwardBytesPerElement = 36.0;
constexpr double kExpertBiasForwardKernelsPerExpert = 2.0, kExpertBiasForwardKernels = 2.0;
constexpr double kExpertBiasBackwardKernelsPerExpert = 5.0, kExpertBiasBackwardKernels = 1.0;

// A clamped gated activation (TransformerSpec::activation_clamp; GPT-OSS) runs in the experts as
// Megatron-Core's weighted_bias_quick_geglu_impl (megatron/core/fusions/fused_bias_geglu.py, which
// TEGroupedMLP.bias_act_func calls under bias_activation_fusion with activation_func_clamp_value
// set; FC1's bias is already added in FC1's GEMM, skip_bias_add False): in PyTorch, before the
// fused activation kernel,
//   x_glu, x_linear = input.chunk(2, -1)
//   input = torch.cat((x_glu.clamp(max=v), x_linear.clamp(min=-v, max=v)), -1)
// and the fused kernel then reads the clamped copy. Per FC1 output row of 2 f elements (f the
// expert FFN width, e bytes each):
//   forward   each clamp reads and writes its half (2 x 2 f e), the cat reads both halves and
//             writes the copy (4 f e)                                                   = 8 f e
//   backward  each clamp's backward reads the gradient and the saved input half and writes the
//             masked gradient (2 x 3 f e); chunk's backward joins the two halves into one
//             gradient (autograd's split_backward is a cat: 4 f e)                         = 10 f e
// three kernels each way. Moving bytes only, they are HBM-bound (OpKind::data_movement). The
// activation's recomputation (moe_act) re-runs the forward ones.
constexpr double kClampForwardElementPassesPerFfnColumn = 8.0;
constexpr double kClampBackwardElementPassesPerFfnColumn = 10.0;
constexpr double kClampKernels = 3.0;

bool clamps_activation(const LayerShape& s) {
  return s.activation_clamp > 0.0 && s.mlp == MlpKind::swiglu && !fused_grouped_mlp(s);
}

Op expert_clamp_op(const LayerShape& s, const MoeRouting& r, bool backward) {
  const double passes = backward ? kClampBackwardElementPassesPerFfnColumn : kClampForwardElementPassesPerFfnColumn;
  Op op = data_movement_op(backward ? "experts_glu_clamp.backward" : "experts_glu_clamp",
                           r.rows * r.expert_ffn * passes * s.activation_bytes);
  op.launches = kClampKernels;
  return op;
}

Op expert_bias_op(const LayerShape& s, const MoeRouting& r, bool backward) {
  const double elements = r.rows * s.hidden;
  Op op = memory_op(backward ? "experts_fc2_bias.backward" : "experts_fc2_bias",
                    elements * (backward ? kExpertBiasBackwardBytesPerElement : kExpertBiasForwardBytesPerElement));
  // Grouped: the packed bias over all rows at once, without the token counts on the host
  // (Megatron-Core TEGroupedMLP._apply_packed_bias): the per-expert kernels run once.
  const double experts = grouped(s) ? 1.0 : r.local_experts;
  op.launches = backward ? kExpertBiasBackwardKernelsPerExpert * experts + kExpertBiasBackwardKernels
                         : kExpertBiasForwardKernelsPerExpert * experts + kExpertBiasForwardKernels;
  return op;
}

}  // namespace

MoeRouting moe_routing(const LayerShape& s) {
  assert(s.moe_layer && s.moe.is_moe());
  const MoeSpec& moe = s.moe;
  MoeRouting r;
  r.tokens = s.norm_tokens();
  r.load = moe.capacity_factor > 0.0 ? moe.capacity_factor : moe.load_imbalance;
  const double ep = std::max(s.ep, 1);
  const double etp = std::max(s.expert_tp, 1);
  r.local_experts = moe.experts / ep;
  const double mean = r.tokens * moe.top_k * ep * etp / moe.experts;
  r.expert_rows = mean * r.load;
  r.rows = r.local_experts * r.expert_rows;
  r.sent = r.tokens * moe.top_k * r.load;
  r.expert_ffn = moe.ffn_hidden / etp;
  r.shared_ffn = moe.shared_experts * static_cast<double>(moe.ffn_hidden) / s.t();
  return r;
}

bool moe_activation_clamped(const LayerShape& s) { return clamps_activation(s); }

bool moe_activation_host_sync(const LayerShape& s) { return clamps_activation(s); }

bool moe_forward_host_sync(const LayerShape& s) {
  if (grouped(s) && is_flex_dispatcher(s.ep_dispatcher)) return false;
  return s.moe_layer && s.moe.capacity_factor <= 0.0 && (s.ep > 1 || s.expert_tp > 1);
}

std::string_view moe_host_sync_after(const LayerShape& s) {
  return is_flex_dispatcher(s.ep_dispatcher) ? kMoeFlexHostSyncAfter : kMoeHostSyncAfter;
}

Bytes moe_all_to_all_bytes(const LayerShape& s) {
  return Bytes(moe_routing(s).sent * s.hidden * s.activation_bytes);
}

namespace {

// C(n - a, k) / C(n, k): k distinct draws from n all miss `a` marked items.
double all_miss(double n, double a, int k) {
  double p = 1.0;
  for (int i = 0; i < k; ++i) {
    const double num = n - a - i;
    if (num <= 0.0) return 0.0;
    p *= num / (n - i);
  }
  return p;
}

// log C(n, k) for 0 <= k <= n.
double log_choose(double n, double k) { return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0); }

// The activation kernel's name for the MLP kind (op names are static strings). The squared ReLU
// costs what the GELU does (model/transformer.h MlpKind).
std::string_view activation_op_name(MlpKind mlp, std::string_view swiglu, std::string_view gelu,
                                    std::string_view relu2) {
  switch (mlp) {
    case MlpKind::swiglu: return swiglu;
    case MlpKind::relu2: return relu2;
    case MlpKind::gelu: break;
  }
  return gelu;
}

}  // namespace

double expected_distinct_bins(const MoeSpec& moe, int bins) {
  const int E = moe.experts;
  const int k = moe.top_k;
  assert(bins >= 1 && bins <= E && k >= 1 && k <= E);
  const bool limited = moe.group_limited() && moe.router_group_topk < moe.router_groups;
  const int G = limited ? moe.router_groups : 1;
  const int M = limited ? moe.router_group_topk : 1;
  assert(E % G == 0 && M <= G);
  const int group_size = E / G;
  const double S = static_cast<double>(M) * group_size;  // eligible experts once the groups are picked
  assert(k <= S);
  const double log_subsets = log_choose(G, M);
  double expected = 0.0;
  for (int j = 0; j < bins; ++j) {
    const int lo = static_cast<int>(static_cast<long long>(j) * E / bins);
    const int hi = static_cast<int>(static_cast<long long>(j + 1) * E / bins);
    // Overlaps of bin j with the groups it meets (contiguous groups of group_size experts).
    std::vector<int> overlaps;
    for (int g = lo / group_size; g * group_size < hi; ++g) {
      overlaps.push_back(std::min(hi, (g + 1) * group_size) - std::max(lo, g * group_size));
    }
    const int r = static_cast<int>(overlaps.size());
    const int width = hi - lo;
    // count[c][a]: subsets of c of the r overlapping groups whose overlaps sum to a.
    std::vector<std::vector<double>> count(static_cast<std::size_t>(r + 1),
                                           std::vector<double>(static_cast<std::size_t>(width + 1), 0.0));
    count[0][0] = 1.0;
    for (int o : overlaps) {
      for (int c = r - 1; c >= 0; --c) {
        for (int a = width - o; a >= 0; --a) count[c + 1][a + o] += count[c][a];
      }
    }
    double miss = 0.0;
    for (int c = 0; c <= std::min(r, M); ++c) {
      if (M - c > G - r) continue;  // the other picks must come from the G - r groups outside bin j
      const double weight = std::exp(log_choose(G - r, M - c) - log_subsets);
      for (int a = 0; a <= width; ++a) {
        if (count[c][a] > 0.0) miss += count[c][a] * weight * all_miss(S, a, k);
      }
    }
    expected += 1.0 - miss;
  }
  return expected;
}

DeepEpBytes moe_deepep_bytes(const LayerShape& s, const GroupLayout& ep_group) {
  const MoeRouting r = moe_routing(s);
  const double n = std::max(ep_group.size, 1);
  const int domains = std::clamp(ep_group.nodes, 1, static_cast<int>(n));
  const double per_domain = n / domains;
  const double token_bytes = r.tokens * r.load * s.hidden * s.activation_bytes;
  DeepEpBytes b;
  if (domains > 1) {
    b.network = Bytes(token_bytes * expected_distinct_bins(s.moe, domains) * (domains - 1.0) / domains);
  }
  if (per_domain > 1.0) {
    b.nvlink = Bytes(token_bytes * expected_distinct_bins(s.moe, static_cast<int>(n)) * (per_domain - 1.0) / per_domain);
  }
  return b;
}

Seconds moe_deepep_time(const LayerShape& s, const GroupLayout& ep_group, const SystemSpec& system,
                        const CostParameters& params) {
  const DeepEpBytes b = moe_deepep_bytes(s, ep_group);
  Seconds t(0.0);
  if (b.network.value() > 0.0) {
    const double nic = system.network.nics_per_node * system.network.nic_bandwidth.value() /
                       std::max(system.gpus_per_node, 1);
    const double rate = nic * params.deepep_network_eta;
    // The fixed time every exchange that crosses the network pays before its bytes stream
    // (CostParameters::deepep_network_latency_s), then the bytes at the measured rate.
    t = rate > 0.0 ? Seconds(params.deepep_network_latency_s + b.network.value() / rate)
                   : Seconds(std::numeric_limits<double>::infinity());
  }
  if (b.nvlink.value() > 0.0) {
    const double rate = system.intra_node_bandwidth.value() * params.deepep_nvlink_eta(system.gpu.architecture);
    t = max(t, rate > 0.0 ? Seconds(b.nvlink.value() / rate) : Seconds(std::numeric_limits<double>::infinity()));
  }
  return t;
}

Bytes moe_expert_tp_bytes(const LayerShape& s) {
  if (s.expert_tp <= 1) return Bytes(0.0);
  return Bytes(moe_routing(s).rows * s.hidden * s.activation_bytes);
}

void push_moe_forward(OpList& ops, const LayerShape& s) {
  const MoeRouting r = moe_routing(s);
  const double e = s.activation_bytes;
  const double h = s.hidden;
  const double E = s.moe.experts;
  const double gated = s.mlp == MlpKind::swiglu ? 2.0 : 1.0;  // FC1 outputs per FFN column

  ops.push(router_gemm("router", s, r.tokens, E, h, kRouterProbabilityBytes));
  // Softmax (or sigmoid) over E logits and top-k: read the logits, write probabilities and indices.
  ops.push(reduction_op("router_topk", r.tokens * E * (2.0 * kRouterProbabilityBytes)));
  // Permute: gather each token's hidden state into its top_k experts' slots.
  if (permutes_separately(s)) ops.push(data_movement_op("moe_permute", r.tokens * s.moe.top_k * h * 2.0 * e));
  // After the all-to-all, tokens arrive grouped by source rank; with several local experts they are
  // re-sorted by expert (Megatron's sort_chunks_by_idxs).
  if (sorts_chunks(s, r)) ops.push(data_movement_op("moe_sort_chunks", r.rows * h * 2.0 * e));
  const bool padded = pads_expert_rows(s, r);
  if (padded) {
    Op pad = data_movement_op("experts_fp8_padding", expert_rows_copy_bytes(s, r));
    pad.launches = kFp8PaddingForwardKernels;
    ops.push(pad);
  }
  if (is_quantized_training_format(s.compute)) ops.push(expert_cast("experts_fp8_casts", s, r, false));
  if (fused_grouped_mlp(s)) {
    // FC1 + SwiGLU + router probabilities + FC2's input quantization in one kernel: per FC1
    // output element (rows x 2 ffn) its 16-bit output and half an element of MXFP8 row- and
    // column-wise FC2 input; no separate activation or cast. FC2's bias, if any, is added in
    // FC2's epilogue (grouped_mlp.py bias_tensor).
    ops.push(grouped_gemm("experts_fc1", s, r.expert_rows, gated * r.expert_ffn, h, r.local_experts,
                          e + kMxfp8RowAndColumnBytesPerElement / gated));
    ops.push(grouped_gemm("experts_fc2", s, r.expert_rows, h, r.expert_ffn, r.local_experts));
  } else {
    ops.push(grouped_gemm("experts_fc1", s, r.expert_rows, gated * r.expert_ffn, h, r.local_experts));
    if (clamps_activation(s)) ops.push(expert_clamp_op(s, r, false));
    ops.push(memory_op(activation_op_name(s.mlp, "experts_swiglu", "experts_gelu", "experts_squared_relu"),
                       r.rows * r.expert_ffn * (gated + 1.0) * e));
    ops.push(grouped_gemm("experts_fc2", s, r.expert_rows, h, r.expert_ffn, r.local_experts));
  }
  if (padded) ops.push(data_movement_op("experts_fp8_unpadding", expert_rows_copy_bytes(s, r)));
  if (s.linear_bias && !fused_grouped_mlp(s)) ops.push(expert_bias_op(s, r, false));
  if (sorts_chunks(s, r)) ops.push(data_movement_op("moe_unsort_chunks", r.rows * h * 2.0 * e));
  // Unpermute: each token's top_k expert outputs weighted by their router probabilities and summed.
  if (permutes_separately(s)) {
    ops.push(data_movement_op("moe_unpermute", r.tokens * s.moe.top_k * h * e + r.tokens * h * e));
  }
  if (r.shared_ffn > 0.0) {
    const double T = s.tokens();
    ops.push(gemm("shared_fc1", s, T, gated * r.shared_ffn, h));
    ops.push(memory_op(activation_op_name(s.mlp, "shared_swiglu", "shared_gelu", "shared_squared_relu"),
                       T * r.shared_ffn * (gated + 1.0) * e));
    ops.push(gemm("shared_fc2", s, T, h, r.shared_ffn));
  }
}

void push_moe_backward(OpList& ops, const LayerShape& s) {
  const MoeRouting r = moe_routing(s);
  const double e = s.activation_bytes;
  const double h = s.hidden;
  const double E = s.moe.experts;
  const double gated = s.mlp == MlpKind::swiglu ? 2.0 : 1.0;

  if (r.shared_ffn > 0.0) {
    const double T = s.tokens();
    push_gemm_backward(ops, "shared_fc2.dgrad", "shared_fc2.wgrad", s, T, h, r.shared_ffn);
    ops.push(memory_op(activation_op_name(s.mlp, "shared_swiglu.backward", "shared_gelu.backward",
                                          "shared_squared_relu.backward"),
                       T * r.shared_ffn * (2.0 * gated + 1.0) * e));
    push_gemm_backward(ops, "shared_fc1.dgrad", "shared_fc1.wgrad", s, T, gated * r.shared_ffn, h);
  }
  // Unpermute backward: the output gradient copied to each of the top_k slots (scaled by its
  // probability), plus the probabilities' gradient (a dot product per slot with the saved outputs).
  if (permutes_separately(s)) {
    ops.push(data_movement_op("moe_unpermute.backward", r.tokens * h * e + r.tokens * s.moe.top_k * h * 2.0 * e));
  }
  if (sorts_chunks(s, r)) ops.push(data_movement_op("moe_sort_chunks.backward", r.rows * h * 2.0 * e));
  const bool fused = fused_grouped_mlp(s);
  if (s.linear_bias && !fused) ops.push(expert_bias_op(s, r, true));
  const bool padded = pads_expert_rows(s, r);
  if (padded) ops.push(data_movement_op("experts_fp8_unpadding.backward", expert_rows_copy_bytes(s, r)));
  if (is_quantized_training_format(s.compute)) ops.push(expert_cast("experts_fp8_casts.backward", s, r, true));
  if (fused) {
    // FC2's data gradient + SwiGLU's backward + the probabilities' gradient + FC1's output
    // gradient quantized (grouped_mlp.py fused backward, the grouped_gemm_dactivation kernel): per
    // data-gradient element (rows x ffn) it reads the saved 16-bit FC1 output (2 elements) and
    // writes FC1's output gradient (2 elements) as MXFP8 row- and column-wise, instead of the
    // 16-bit gradient and the separate activation backward and cast.
    push_grouped_gemm_backward(ops, "experts_fc2.dgrad", "experts_fc2.wgrad", s, r.expert_rows, h, r.expert_ffn,
                               r.local_experts, gated * (e + kMxfp8RowAndColumnBytesPerElement));
  } else {
    push_grouped_gemm_backward(ops, "experts_fc2.dgrad", "experts_fc2.wgrad", s, r.expert_rows, h, r.expert_ffn,
                               r.local_experts);
    ops.push(memory_op(activation_op_name(s.mlp, "experts_swiglu.backward", "experts_gelu.backward",
                                          "experts_squared_relu.backward"),
                       r.rows * r.expert_ffn * (2.0 * gated + 1.0) * e));
    if (clamps_activation(s)) ops.push(expert_clamp_op(s, r, true));
  }
  push_grouped_gemm_backward(ops, "experts_fc1.dgrad", "experts_fc1.wgrad", s, r.expert_rows, gated * r.expert_ffn,
                             h, r.local_experts);
  if (padded) ops.push(data_movement_op("experts_fp8_padding.backward", expert_rows_copy_bytes(s, r)));
  if (sorts_chunks(s, r)) ops.push(data_movement_op("moe_unsort_chunks.backward", r.rows * h * 2.0 * e));
  // Permute backward: the top_k slot gradients of each token summed back into it.
  if (permutes_separately(s)) {
    ops.push(data_movement_op("moe_permute.backward", r.tokens * s.moe.top_k * h * e + r.tokens * h * e));
  }
  ops.push(reduction_op("router_topk.backward", r.tokens * E * (3.0 * kRouterProbabilityBytes)));
  ops.push(router_gemm("router.dgrad", s, r.tokens, h, E));
  Op router_wgrad = router_gemm("router.wgrad", s, h, E, r.tokens, ops::main_grad_accumulate_bytes(s));
  router_wgrad.gemm.leading = ops::weight_gradient_leading(ops::attention_dtype(s));  // the router's 16 bits
  ops.push(router_wgrad);
}

}  // namespace stepcast
