#pragma once
// One transformer layer as a single tensor-parallel rank executes it on one micro-batch: the
// dimensions every per-layer cost function (ops, FLOPs, activation memory, TP traffic) needs.
//
// Built once per scenario by make_layer_shape() and passed by value; all sizes are element counts
// held as doubles (products reach 1e12 and beyond). A mixture-of-experts model has two layer
// kinds: make_layer_shape() gives the dense one (moe_layer false: a dense MLP of width ffn) and
// moe_layer_shape() the one whose MLP is the experts.

#include <optional>

#include "model/datatype.h"
#include "model/hardware.h"
#include "model/parallel.h"
#include "model/precision.h"
#include "model/transformer.h"
#include "model/workload.h"

namespace stepcast {

struct LayerShape {
  double micro_batch = 1.0;   // b, sequences
  double seq = 2048.0;        // s, tokens of one sequence this rank holds (seq_len / cp)
  double context = 2048.0;    // tokens each query attends over (the full seq_len)
  // Tokens per packed document, attention masked per document (TrainingWorkload::document_tokens);
  // 0 (or >= context): one document per sequence. Only the fused attention kernel's work and shape
  // follow it (attention_keys).
  double document = 0.0;
  double hidden = 0.0;        // h
  double heads = 0.0;         // a
  double kv_heads = 0.0;      // g
  double head_dim = 0.0;      // d
  double ffn = 0.0;           // f (dense MLP width)
  double vocab = 0.0;         // V
  int tp = 1;
  bool sequence_parallel = false;
  MlpKind mlp = MlpKind::gelu;
  NormKind norm = NormKind::layernorm;
  PositionEmbedding position = PositionEmbedding::learned;
  KernelFusion kernels = KernelFusion::fused;  // elementwise kernels fused, or PyTorch eager
  // GQA K and V copied to every query head before the attention kernel (TrainingWorkload::repeat_kv,
  // resolved; false without GQA or with MLA).
  bool repeat_kv = false;
  bool linear_bias = true;
  bool dropout = true;           // attention and hidden dropout (GPT-style; stores masks)
  bool qk_norm = false;          // per-head RMSNorm of queries and keys (TransformerSpec::qk_norm)
  bool flash_attention = true;   // fused attention kernel; false: Megatron's unfused softmax path
  AttentionKernel attention_kernel = AttentionKernel::best;  // which fused kernel (flash_attention only)
  bool causal = true;            // decoder: a causal mask (flash kernels skip masked blocks)
  bool fp8_attention = false;     // FP8 fused attention (PrecisionConfig::fp8_attention; quantized compute only)
  DataType compute = DataType::bf16;  // GEMM input format
  Fp8Scaling fp8_scaling = Fp8Scaling::delayed;  // FP8's scaling recipe (casts' cost)
  // Whether per-tensor-scaled FP8 GEMM operands need transposed copies (the backward's TN-only FP8
  // GEMMs): true on Hopper and Ada, false on Blackwell (fp8_gemm_needs_transposes, set from the
  // GPU by make_layer_shape's overload that takes its architecture). The casts' time and the cached FP8
  // weight copies in memory (model_state_bytes) both follow it. Block formats ignore it.
  bool fp8_transposes = true;
  double activation_bytes = 2.0;      // bytes per stored activation element
  double main_grad_bytes = 4.0;       // bytes per element of the main gradient (precision.grads)
  // Which cross-entropy kernels run after the output layer (model/cross_entropy_kernels.h).
  CrossEntropyFusion cross_entropy = CrossEntropyFusion::native;
  // Bytes per logit the cross-entropy keeps for the backward: FP32 (4) natively, the 16-bit
  // logits themselves with Transformer Engine's in-place fused cross-entropy (CrossEntropyFusion).
  [[nodiscard]] double saved_logit_bytes() const {
    return cross_entropy == CrossEntropyFusion::te ? activation_bytes : 4.0;
  }
  // Bytes per logit alive beside the saved ones while the loss's backward runs, on the last
  // stage for one micro-batch: 8 (two FP32 gradients) with PyTorch's cross-entropy, 12 (three) with
  // it on vocab-sharded logits (tp > 1, DTensor loss parallelism; model/workload.h), 4 with
  // Megatron's fused native path (Inductor's FP32 copy of the softmax), else 0 (Megatron's unfused
  // and Transformer Engine's kernels overwrite the saved logits in place).
  [[nodiscard]] double loss_backward_logit_bytes() const {
    switch (cross_entropy) {
      case CrossEntropyFusion::fused: return 4.0;
      case CrossEntropyFusion::pytorch: return tp > 1 ? 12.0 : 8.0;
      case CrossEntropyFusion::native:
      case CrossEntropyFusion::te: break;
    }
    return 0.0;
  }

  // Attention variant, experts and context parallelism (the same for every layer of a model).
  std::optional<MlaSpec> mla;         // multi-head latent attention instead of MHA/GQA/MQA
  bool moe_layer = false;             // this layer's MLP is the mixture of experts in `moe`
  MoeSpec moe;                        // moe.ffn_hidden resolved (> 0 for a MoE model)
  int ep = 1;                         // expert-parallel ranks (model/placement.h)
  int expert_tp = 1;                  // tensor parallelism inside the experts
  ExpertDispatcher ep_dispatcher = ExpertDispatcher::alltoall;  // how tokens reach the experts
  MoeGroupedGemm moe_grouped_gemm = MoeGroupedGemm::per_expert;  // how the experts' GEMMs run
  int cp = 1;                         // context-parallel ranks: seq above is seq_len / cp
  ContextParallelKind cp_kind = ContextParallelKind::ring;
  // Sliding-window attention: the window in tokens (0: none) and the share of layers using it.
  // One shape prices the average layer (exact over a stage holding whole window/full periods).
  double window = 0.0;
  double windowed_fraction = 0.0;
  // The gated activation's clamp (TransformerSpec::activation_clamp; 0: none).
  double activation_clamp = 0.0;

  [[nodiscard]] double tokens() const { return micro_batch * seq; }  // b*s
  [[nodiscard]] double t() const { return static_cast<double>(tp); }
  // Tokens that replicated (non-TP) regions hold: all of them, or 1/t with sequence parallelism.
  [[nodiscard]] double norm_tokens() const { return sequence_parallel ? tokens() / t() : tokens(); }
  [[nodiscard]] double q_width() const { return heads * head_dim; }       // a*d (== h usually)
  [[nodiscard]] double kv_width() const { return kv_heads * head_dim; }   // g*d
  [[nodiscard]] double fc1_width() const { return mlp == MlpKind::swiglu ? 2.0 * ffn : ffn; }
  // Weight matrices of one MLP (or one expert): gate, up and down for SwiGLU; FC1 and FC2 else.
  [[nodiscard]] double mlp_matrices() const { return mlp == MlpKind::swiglu ? 3.0 : 2.0; }
  bool operator==(const LayerShape&) const = default;
};

// Dimensions from a scenario's parts (the dense layer kind), with fp8_transposes left at Hopper's
// rule (true).
LayerShape make_layer_shape(const TransformerSpec& model, const TrainingWorkload& training,
                            const ParallelConfig& parallel, const PrecisionConfig& precision);
// The same on a GPU of `arch`: fp8_transposes = fp8_gemm_needs_transposes(arch). What a prediction
// of a scenario uses.
LayerShape make_layer_shape(const TransformerSpec& model, const TrainingWorkload& training,
                            const ParallelConfig& parallel, const PrecisionConfig& precision, GpuArchitecture arch);
// The same layer with its MLP replaced by the experts (requires shape.moe.is_moe()).
LayerShape moe_layer_shape(LayerShape shape);

// The keys one query of a fused attention kernel can see before any causal or window mask: the
// whole context, or its packed document (LayerShape::document) when shorter.
double attention_keys(const LayerShape& shape);
// Documents in one sequence: context / attention_keys (1 without packed documents).
double documents_per_sequence(const LayerShape& shape);

// Whether Transformer Engine keeps transposed copies of per-tensor-scaled FP8 tensors on `arch`.
// Hopper's and Ada's FP8 tensor-core GEMMs take only the TN layout, so TE writes each FP8 operand's
// transpose for the backward's data- and weight-gradient GEMMs. Blackwell's take any layout: TE's
// quantizers create the transpose only when `columnwise_usage && !nvte_is_non_tn_fp8_gemm_supported()`
// (NVIDIA/TransformerEngine transformer_engine/pytorch/csrc/quantizer.cpp
// @0064fbd645a9c89e1eb4796ceebc6eeac6e9c02a, Float8Quantizer and Float8CurrentScalingQuantizer
// create_tensor), and nvte_is_non_tn_fp8_gemm_supported() (transformer_engine/common/
// transformer_engine.cpp) holds for compute capability 10.x-11.x and >= 13.0: B200 and GB200 (10.0).
// CDNA3 (no Transformer Engine FP8 path priced here) keeps Hopper's rule.
[[nodiscard]] bool fp8_gemm_needs_transposes(GpuArchitecture arch);

}  // namespace stepcast
