#pragma once
// Memory of one GPU of an inference engine (the largest pipeline stage), and what is left for
// the KV cache.
//
//   weights       the stage's layers at the stored format (+ group scales), embedding/output
//                 layer in 16 bits (model/inference_shape.h)
//   activations   the working set of the largest step: per token, the residual stream and
//                 normalised input (2 h), the widest intermediate (QKV + rotated Q, or the MLP's
//                 FC1 output and activation, or a MoE layer's routed copies), at 16 bits; plus
//                 the logits of the rows that sample (FP32, gathered over the vocabulary)
//   buffers       CUDA context, cuBLAS workspace, NCCL buffers per communicator (CostParameters)
//   fragmentation allocator overhead on the activations (CostParameters)
//   kv_cache      static: the batch's sequences at full length (input + output); serving: the
//                 pool, kv_memory_fraction of what is free after everything else (TensorRT-LLM's
//                 kv_cache_free_gpu_mem_fraction; default 0.9)
// Capacity: the GPU's memory, less InferenceCostParameters::unified_memory_reserve_bytes on a
// unified-memory device (Jetson), whose memory the OS and CPU share.

#include "model/cost_parameters.h"
#include "model/hardware.h"
#include "model/inference_parameters.h"
#include "model/inference_shape.h"
#include "model/prediction.h"

namespace stepcast {

struct InferenceMemory {
  MemoryBreakdown breakdown;   // per GPU; kv_cache as described above
  Bytes capacity;              // usable memory per GPU
  Bytes free_for_kv;           // capacity - weights - activations - buffers - fragmentation
  Bytes kv_per_token;          // per GPU (the stage's layers on this rank)
  bool fits = true;            // peak <= capacity (and, serving, a pool that holds a token)
};

// Working set of a step of `tokens` tokens of which `rows` sample a token, per GPU.
Bytes inference_activation_bytes(const InferenceShape& s, double tokens, double rows);

// The memory a single batch needs: `sequences` sequences of `context` tokens each (per engine
// instance), the largest step running `step_tokens` tokens with `rows` sampling.
InferenceMemory static_inference_memory(const InferenceShape& s, const GpuSpec& gpu, double sequences, double context,
                                        double step_tokens, double rows, const CostParameters& cost,
                                        const InferenceCostParameters& inference);

// A serving engine's memory: the largest step has `step_tokens` tokens and `rows` sampling rows;
// the KV pool takes kv_fraction of the rest.
InferenceMemory serving_inference_memory(const InferenceShape& s, const GpuSpec& gpu, double step_tokens, double rows,
                                         double kv_fraction, const CostParameters& cost,
                                         const InferenceCostParameters& inference);

}  // namespace stepcast
