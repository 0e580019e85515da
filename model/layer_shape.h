#pragma once
// One transformer layer as a single tensor-parallel rank executes it on one micro-batch: the
// dimensions every per-layer cost function (ops, FLOPs, activation memory, TP traffic) needs.
//
// Built once per scenario by make_layer_shape() and passed by value; all sizes are element counts
// held as doubles (products reach 1e12 and beyond).

#include "model/datatype.h"
#include "model/parallel.h"
#include "model/precision.h"
#include "model/transformer.h"
#include "model/workload.h"

namespace stepcast {

struct LayerShape {
  double micro_batch = 1.0;   // b, sequences
  double seq = 2048.0;        // s, tokens of one sequence this rank holds (seq_len / cp)
  double context = 2048.0;    // tokens each query attends over (the full seq_len)
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
  bool linear_bias = true;
  bool dropout = true;           // attention and hidden dropout (GPT-style; stores masks)
  bool flash_attention = true;   // fused attention kernel; false: Megatron's unfused softmax path
  bool causal = true;            // decoder: a causal mask (flash kernels skip masked blocks)
  DataType compute = DataType::bf16;  // GEMM input format
  double activation_bytes = 2.0;      // bytes per stored activation element

  [[nodiscard]] double tokens() const { return micro_batch * seq; }  // b*s
  [[nodiscard]] double t() const { return static_cast<double>(tp); }
  // Tokens that replicated (non-TP) regions hold: all of them, or 1/t with sequence parallelism.
  [[nodiscard]] double norm_tokens() const { return sequence_parallel ? tokens() / t() : tokens(); }
  [[nodiscard]] double q_width() const { return heads * head_dim; }       // a*d (== h usually)
  [[nodiscard]] double kv_width() const { return kv_heads * head_dim; }   // g*d
  [[nodiscard]] double fc1_width() const { return mlp == MlpKind::swiglu ? 2.0 * ffn : ffn; }
  bool operator==(const LayerShape&) const = default;
};

// Dimensions from a scenario's parts.
LayerShape make_layer_shape(const TransformerSpec& model, const TrainingWorkload& training,
                            const ParallelConfig& parallel, const PrecisionConfig& precision);

}  // namespace stepcast
