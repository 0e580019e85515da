#pragma once
// One inference engine's rank: the dimensions, weight bytes and KV-cache bytes that every
// inference cost function needs, derived once from the model, the parallel layout and the
// precision.
//
// Layout (TensorRT-LLM / vLLM conventions):
//   tp   attention heads, MLP columns and the vocabulary are split over tp ranks (Megatron's
//        column/row-parallel pairs, Shoeybi et al. 2019, Fig. 3); KV heads split when g >= tp and
//        are replicated (one per rank) when tp > g. MLA's compressed latent is replicated on every
//        rank (each rank's heads attend over the whole latent).
//   pp   layers split over pp stages; the slowest (largest) stage sets the pipeline's rate.
//   ep   mixture-of-experts layers split their experts over ep of the tp ranks, each expert
//        column-split over the remaining tp/ep (TensorRT-LLM: moe_ep_size * moe_tp_size =
//        tp_size); tokens reach their experts through the same all-reduce the dense MLP uses.
//
// Precision: `params` is the stored weight format, `compute` the GEMM input format.
//   compute 8-bit (fp8/int8: W8A8) or 4-bit   GEMMs at that format's peak, activations fed
//                                             in that format (1 byte; quantization fused into
//                                             the producing kernel)
//   params narrower than a 16-bit compute     weight-only (W8A16/W4A16): weights read at their
//                                             width plus group scales, GEMMs at the 16-bit peak
//                                             slowed by dequantization once compute-bound
// The word embedding and the output layer stay in 16 bits (AWQ, GPTQ and TensorRT-LLM leave
// them unquantized). KV bytes per token per layer: 2 g d bytes(kv_cache) for MHA/GQA/MQA, and
// (kv_lora_rank + qk_rope_head_dim) bytes(kv_cache) for MLA (DeepSeek-V2, arXiv:2405.04434
// Sec. 2.1.3: the latent and the decoupled RoPE key are what is cached).
//
// All sizes are element counts or bytes held as doubles.

#include <optional>

#include "model/datatype.h"
#include "model/inference_parameters.h"
#include "model/parallel.h"
#include "model/precision.h"
#include "model/transformer.h"
#include "model/units.h"

namespace stepcast {

struct InferenceShape {
  double hidden = 0.0;    // h
  double heads = 0.0;     // a (whole model)
  double kv_heads = 0.0;  // g
  double head_dim = 0.0;  // d
  double ffn = 0.0;       // dense MLP width f
  double vocab = 0.0;     // V
  int layers = 0;         // whole model
  int moe_layers = 0;     // layers whose MLP is a mixture of experts
  int tp = 1;
  int pp = 1;
  int ep = 1;
  MlpKind mlp = MlpKind::swiglu;
  bool tied_embeddings = false;
  // Decode attention reads each KV head once per query head sharing it (kernels without GQA
  // sharing; see DecodeAttention in model/workload.h), instead of once.
  bool kv_read_per_query_head = false;
  std::optional<MlaSpec> mla;
  MoeSpec moe;

  DataType compute = DataType::bf16;   // GEMM input format (its peak applies)
  DataType weights = DataType::bf16;   // stored weight format
  DataType kv_cache = DataType::bf16;
  double activation_bytes = 2.0;       // 16-bit activations between kernels
  double gemm_input_bytes = 2.0;       // activation bytes a GEMM reads (1 for W8A8)
  double weight_bytes = 2.0;           // per stored weight, group scales included
  bool weight_only = false;            // weights narrower than the compute format
  double weight_only_compute_factor = 1.0;  // share of the GEMM rate kept once compute-bound

  [[nodiscard]] double t() const { return static_cast<double>(tp); }
  [[nodiscard]] double heads_per_rank() const { return heads / t(); }
  [[nodiscard]] double kv_heads_per_rank() const { return kv_heads >= t() ? kv_heads / t() : 1.0; }
  [[nodiscard]] double q_width_per_rank() const;   // query (and attention output) width per rank
  [[nodiscard]] double o_width_per_rank() const;   // attention output width per rank (MLA: a v)
  [[nodiscard]] double fc1_width() const { return mlp == MlpKind::swiglu ? 2.0 * ffn : ffn; }
  // Layers on the largest pipeline stage: ceil(layers / pp).
  [[nodiscard]] int stage_layers() const { return (layers + pp - 1) / pp; }
  // Share of the model's MoE layers on that stage (layers spread evenly).
  [[nodiscard]] double stage_fraction() const { return static_cast<double>(stage_layers()) / layers; }
};

InferenceShape make_inference_shape(const TransformerSpec& model, const ParallelConfig& parallel,
                                    const PrecisionConfig& precision, const InferenceCostParameters& params);

// KV-cache bytes one token adds in one layer: for the whole model, and on one TP rank.
Bytes kv_bytes_per_token_layer(const InferenceShape& s);
Bytes kv_bytes_per_token_layer_per_rank(const InferenceShape& s);
// KV-cache bytes one token occupies on one GPU of the largest pipeline stage (all its layers).
Bytes kv_bytes_per_token_per_gpu(const InferenceShape& s);

// Weight elements one TP rank holds of one layer.
struct InferenceLayerWeights {
  double attention = 0.0;     // projections (MLA: all its low-rank projections)
  double mlp = 0.0;           // dense MLP, or shared experts of a MoE layer
  double experts = 0.0;       // routed experts on this rank (all of them)
  double expert_each = 0.0;   // one routed expert's weights on this rank
  double router = 0.0;
  double norms = 0.0;
};
InferenceLayerWeights inference_layer_weights(const InferenceShape& s, bool moe_layer);

// Weight bytes on one GPU of the largest pipeline stage: its layers at the stored format, plus
// the 16-bit embedding (first stage) and output layer (last stage) when pp == 1, else the larger
// of the two ends.
Bytes weight_bytes_per_gpu(const InferenceShape& s);

}  // namespace stepcast
