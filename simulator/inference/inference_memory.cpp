#include "simulator/inference/inference_memory.h"

#include <algorithm>

namespace stepcast {
namespace {

Bytes usable_capacity(const GpuSpec& gpu, const InferenceCostParameters& inference) {
  const Bytes reserve(gpu.unified_memory ? inference.unified_memory_reserve_bytes : 0.0);
  return max(gpu.memory - reserve, Bytes(0.0));
}

Bytes buffer_bytes(const InferenceShape& s, const CostParameters& cost) {
  const int communicators = (s.tp > 1 ? 1 : 0) + (s.pp > 1 ? 1 : 0);
  return Bytes(cost.cuda_context_bytes + cost.cublas_workspace_bytes +
               cost.nccl_buffer_bytes_per_communicator * communicators);
}

// Everything but the KV cache.
InferenceMemory base_memory(const InferenceShape& s, const GpuSpec& gpu, double tokens, double rows,
                            const CostParameters& cost, const InferenceCostParameters& inference) {
  InferenceMemory m;
  MemoryBreakdown& b = m.breakdown;
  b.weights = weight_bytes_per_gpu(s);
  b.activations = inference_activation_bytes(s, tokens, rows);
  b.buffers = buffer_bytes(s, cost);
  b.fragmentation = b.activations * cost.allocator_fragmentation;
  m.capacity = usable_capacity(gpu, inference);
  m.kv_per_token = kv_bytes_per_token_per_gpu(s);
  m.free_for_kv = m.capacity - b.weights - b.activations - b.buffers - b.fragmentation;
  return m;
}

}  // namespace

Bytes inference_activation_bytes(const InferenceShape& s, double tokens, double rows) {
  const double e = s.activation_bytes;
  const double residual = 2.0 * s.hidden;
  const double attention = 2.0 * s.q_width_per_rank() + 2.0 * s.kv_heads_per_rank() * s.head_dim;
  const double mlp = s.fc1_width() / s.t() + s.ffn / s.t();
  double widest = std::max(attention, mlp);
  if (s.moe_layers > 0) {
    const double expert_tp = static_cast<double>(s.tp) / s.ep;
    const double fe = s.moe.ffn_hidden / expert_tp;
    const double fc1 = s.mlp == MlpKind::swiglu ? 2.0 * fe : fe;
    const double slots = static_cast<double>(s.moe.top_k) / s.ep * s.moe.load_imbalance;
    widest = std::max(widest, slots * (2.0 * s.hidden + fc1 + fe));
  }
  // Logits: this rank's vocabulary shard in 16 bits, the gathered vocabulary in FP32 for sampling.
  const double logits = rows * (s.vocab / s.t() * e + s.vocab * 4.0);
  return Bytes(tokens * (residual + widest) * e + logits);
}

InferenceMemory static_inference_memory(const InferenceShape& s, const GpuSpec& gpu, double sequences, double context,
                                        double step_tokens, double rows, const CostParameters& cost,
                                        const InferenceCostParameters& inference) {
  InferenceMemory m = base_memory(s, gpu, step_tokens, rows, cost, inference);
  MemoryBreakdown& b = m.breakdown;
  b.kv_cache = m.kv_per_token * (sequences * context);
  b.peak = b.weights + b.kv_cache + b.activations + b.buffers + b.fragmentation;
  m.fits = b.peak <= m.capacity;
  return m;
}

InferenceMemory serving_inference_memory(const InferenceShape& s, const GpuSpec& gpu, double step_tokens, double rows,
                                         double kv_fraction, const CostParameters& cost,
                                         const InferenceCostParameters& inference) {
  InferenceMemory m = base_memory(s, gpu, step_tokens, rows, cost, inference);
  MemoryBreakdown& b = m.breakdown;
  b.kv_cache = max(m.free_for_kv * kv_fraction, Bytes(0.0));
  b.peak = b.weights + b.kv_cache + b.activations + b.buffers + b.fragmentation;
  m.fits = m.free_for_kv.value() > 0.0 && b.kv_cache >= m.kv_per_token;
  return m;
}

}  // namespace stepcast
