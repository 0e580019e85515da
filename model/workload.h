#pragma once
// What is being run: a training job (sequences per optimizer step) or an inference workload.
//
// Inference has two modes. Static: one batch of fixed input/output lengths (what TensorRT-LLM's
// static tables measure). Serving: a stream of requests through a discrete-event simulation; its
// arrival process, length distributions, scheduler and SLOs live in ServingWorkload.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/attention_kernel.h"
#include "model/units.h"

namespace stepcast {

// fused: Megatron-Core / Transformer Engine kernels (or torch.compile): each norm, RoPE, gated
// activation and bias-dropout-add is one kernel that reads its inputs and writes its output once.
// eager: PyTorch eager mode running a model written as plain tensor ops (torchtitan's and Meta's
// reference Llama, IBM's foundation-model-stack): an RMSNorm is ~7 kernels in FP32, RoPE goes
// through FP32 complex views, SwiGLU is silu then mul, GQA repeats K and V; model/layer_ops.cpp
// counts each kernel's bytes. Built-in PyTorch ops that are single kernels (F.layer_norm,
// F.gelu, flash SDPA) cost the same in both.
enum class KernelFusion { fused, eager };

// The cross-entropy kernels after the output layer (Megatron-Core cross_entropy_loss_fusion and
// cross_entropy_fusion_impl). Their time: the kernels and bytes model/cross_entropy_kernels.h counts
// from each implementation's code. What they keep for the backward:
// native: Megatron's unfused vocab-parallel cross-entropy (megatron/core/tensor_parallel/
// cross_entropy.py; Megatron-Core's default, cross_entropy_loss_fusion False), which keeps the
// logits' softmax in FP32 for the backward (4 s b V / t bytes, Korthikanti et al. 2022 Sec. 4.3).
// fused: Megatron's fused native path (cross_entropy_loss_fusion True, impl 'native';
// megatron/core/fusions/fused_cross_entropy.py, its steps under torch.compile): the same FP32
// softmax kept, and while its backward runs one more FP32 copy of it, the fresh buffer Inductor
// writes the scattered, scaled gradient into before copying it back (4 s b V / t;
// model/cross_entropy_kernels.cpp).
// te: Transformer Engine's fused cross-entropy (impl 'te'; transformer_engine/pytorch/
// cross_entropy.py, CrossEntropyFunction), which saves its 16-bit input logits and overwrites them
// in place with their gradient: 2 s b V / t bytes.
// pytorch: PyTorch's torch.nn.functional.cross_entropy on the logits cast to FP32, as torchtitan's
// loss (`cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1))`; under loss parallelism
// the same ops on vocab-sharded DTensors). It keeps log_softmax's FP32 output for the backward
// (4 s b V / t, as native), and its backward holds two more FP32 tensors of that shape at once:
// nll_loss's gradient and log_softmax's input gradient, allocated beside the saved output
// (PyTorch tools/autograd/derivatives.yaml: _log_softmax_backward_data(grad, result, ...) is not
// in place). On vocab-sharded logits (tp > 1: torchtitan's default loss parallelism, DTensor's
// loss_parallel()) nll_loss's backward is PyTorch's own decomposition, which also does
// log_softmax's backward (pytorch/pytorch torch/distributed/tensor/parallel/loss.py @02eef6b8,
// _nll_loss_and_log_softmax_backward): grad_input = zeros_like(x), then
// `(grad_input + torch.exp(x)) * grad_output`, so exp(x) and the sum live beside grad_input and
// the saved output (then the sum, the product and grad_input): three FP32 tensors of that shape
// beside the saved one, 12 s b V / t, instead of two. Its time is priced with native's bytes.
enum class CrossEntropyFusion { native, fused, te, pytorch };

struct TrainingWorkload {
  int seq_len = 2048;
  int global_batch = 1;   // sequences per optimizer step
  int micro_batch = 1;    // sequences per micro-batch per data-parallel replica
  // Fused attention kernel (FlashAttention / cuDNN, Megatron-Core's default since 2023). false:
  // the unfused path of Megatron-LM before it (baddbmm, fused scale-mask-softmax, dropout, bmm),
  // which materializes the s x s scores.
  bool flash_attention = true;
  // Which fused attention kernel runs (model/attention_kernel.h): the GPU generation's best,
  // FlashAttention-2 (PyTorch SDPA's flash backend, flash-attn 2), or llm-foundry's Triton
  // FlashAttention (attn_impl: triton).
  AttentionKernel attention_kernel = AttentionKernel::best;
  // How the layers' elementwise work (norms, RoPE, activation, residual adds) runs; see KernelFusion.
  KernelFusion kernels = KernelFusion::fused;
  // Which cross-entropy kernels run after the output layer; see CrossEntropyFusion.
  CrossEntropyFusion cross_entropy_fusion = CrossEntropyFusion::native;
  // Whether the model code copies a GQA model's K and V to every query head before the attention
  // kernel (training.repeat_kv). torchtitan's Llama of 2024 does (torchtitan/models/llama/model.py
  // @6d74b81c, Attention.forward: keys = repeat_kv(xk, self.n_rep) before
  // F.scaled_dot_product_attention), eager or compiled: under torch.compile SDPA is an extern
  // kernel that takes the materialized copy. Megatron-Core / Transformer Engine pass the shared KV
  // heads to the kernel. Unset: what `kernels` implies (eager: the plain-PyTorch models repeat;
  // fused: they do not). With it the copy and its backward run, the kernel and what it saves see
  // every head's K and V, and so do the context-parallel exchanges (model/context_parallel.h).
  // No effect without GQA (kv_heads >= heads) or with MLA.
  std::optional<bool> repeat_kv;
  // Tokens per document when each sequence packs several documents and attention is masked per
  // document (training.document_tokens): Megatron-Core's packed sequences (the THD layout with
  // cu_seqlens, PackedSeqParams; NeMo / Megatron-Bridge packed SFT), FlashAttention's varlen and
  // cuDNN's ragged kernels, Llama 3's document mask ("an attention mask that prevents
  // self-attention between different documents within the same sequence", Llama 3 Herd of Models,
  // arXiv:2407.21783, Sec. 3.2). The documents are taken as equal, seq_len / document_tokens of
  // them per sequence: a fused kernel then does each document's causal work, s N / 2 score pairs per
  // head instead of s^2 / 2, in CTAs over N-token problems. The unfused path materializes the whole
  // s x s score matrix and masks it, so its time does not change. Every GEMM, norm and
  // communication still sees all seq_len tokens. 0: one document per sequence (no mask).
  int document_tokens = 0;

  // Terms that make a real run slower than its step time (goodput); zero/empty means ignored.
  struct Goodput {
    double dataloader_samples_per_s = 0.0;  // per data-parallel replica; 0: never the bottleneck
    double straggler_cv = 0.0;              // coefficient of variation of per-rank step time
    Seconds checkpoint_interval;            // 0: no checkpoints
    Bytes checkpoint_size;                  // 0: derived from the model states
    Bandwidth checkpoint_write_bandwidth;   // per node, to the checkpoint store
    double gpu_mtbf_hours = 0.0;            // 0: no failures
    Seconds restart_time;
    bool operator==(const Goodput&) const = default;
  } goodput;
  bool operator==(const TrainingWorkload&) const = default;
};

enum class InferenceMode { static_batch, serving };
enum class BatchScheduler { continuous, static_batch, dynamic };
// closed_loop: `concurrency` clients, each sending its next request the moment its previous one
// finishes (the fixed-concurrency mode of serving benchmarks: genai-perf --concurrency, vLLM's
// benchmark_serving --max-concurrency); the arrival rate follows the service rate.
enum class ArrivalProcess { poisson, gamma, all_at_once, trace, closed_loop };
enum class LengthDistribution { fixed, uniform, lognormal, exponential };
// How decode attention reads a GQA/MQA cache. grouped: each KV head is read once for all the query
// heads that share it (TensorRT-LLM's XQA kernels from v0.8, FlashInfer, FlashDecoding, vLLM's
// paged attention v2). per_query_head: every query head reads its KV head again (TensorRT-LLM's
// masked multi-head attention before XQA; docs/source/blogs/XQA-kernel.md: XQA "reduc[es] data
// loading" for MQA/GQA in the generation phase).
enum class DecodeAttention { grouped, per_query_head };

struct LengthSpec {
  LengthDistribution dist = LengthDistribution::fixed;
  double mean = 0.0;
  double p99 = 0.0;   // for lognormal; ignored by fixed
  double min = 1.0;
  double max = 0.0;   // 0: unbounded
  bool operator==(const LengthSpec&) const = default;
};

struct TraceRequest {
  Seconds arrival;
  int input_len = 0;
  int output_len = 0;
  bool operator==(const TraceRequest&) const = default;
};

struct ServingWorkload {
  ArrivalProcess arrivals = ArrivalProcess::poisson;
  double arrival_rate_per_s = 1.0;
  double gamma_cv = 1.0;          // coefficient of variation of inter-arrival times (gamma)
  int concurrency = 0;            // closed_loop: requests kept in the system
  int requests = 1000;
  // Warm-up: the first warmup_requests requests are served but left out of the latency and
  // throughput statistics, as a benchmark client leaves out its warm-up and start-up transient
  // (perf_analyzer, which genai-perf drives, reports only measurement windows after its
  // stabilization passes; genai-perf and AIPerf discard --warmup-request-count requests).
  // -1: the default, which is `concurrency` for a closed loop (its clients all start at the same
  // instant, and that burst's queue is a transient whose weight in a mean would depend on how
  // many requests are simulated) and 0 otherwise. 0 counts every request.
  int warmup_requests = -1;
  LengthSpec input_len;
  LengthSpec output_len;
  std::vector<TraceRequest> trace;  // filled when arrivals == trace
  std::string trace_file;           // provenance of the trace
  std::uint64_t seed = 1;
  BatchScheduler scheduler = BatchScheduler::continuous;
  int max_batch = 256;              // sequences in flight
  int max_batch_tokens = 8192;      // token budget per iteration (chunked prefill)
  // How prompts enter a continuous batcher's iterations:
  //   chunked_prefill  prompts cut into chunks that fill the token budget left by the decodes, in
  //                    the same iteration (Sarathi-Serve; vLLM V1's default)
  //   otherwise        whole prompts that fit the budget left by the decodes, in the same iteration
  //                    as the decodes (TensorRT-LLM's in-flight batching, whose default is
  //                    enable_chunked_prefill: false; vLLM V1 without chunking)
  //   prefill_first    (without chunking) iterations of whole prompts only, decodes stalled
  //                    meanwhile (vLLM v0's scheduler)
  bool chunked_prefill = true;
  bool prefill_first = false;
  Seconds batch_timeout;            // dynamic batching window
  int kv_block_tokens = 16;
  double kv_memory_fraction = 0.9;  // share of free memory given to the KV cache
  enum class Preemption { recompute, swap } preemption = Preemption::recompute;
  // How a continuous batcher admits a request against the KV pool:
  //   on_demand  blocks for what it prefills now; later decodes take blocks as they go and preempt
  //              when none is free (vLLM's block manager, Kwon et al. SOSP'23)
  //   reserve    blocks for its whole input + output at admission, so nothing is ever preempted
  //              (TensorRT-LLM's default capacity policy, GUARANTEED_NO_EVICT)
  enum class KvAdmission { on_demand, reserve } kv_admission = KvAdmission::on_demand;
  // Each request's max_tokens: the most it may generate (0: no cap beyond its own output length).
  // A request whose drawn or traced output is longer stops there. With kv_admission: reserve the
  // admission reserves input + max_output_tokens, not the output it will turn out to have: the
  // engine cannot know where a request stops, so TensorRT-LLM's GUARANTEED_NO_EVICT admits a
  // request only while the free blocks cover what every scheduled request still needs to reach
  // its prompt + max_new_tokens (cpp/tensorrt_llm/batch_manager/capacityScheduler.cpp,
  // GuaranteedNoEvictScheduler; scheduledBlocksManager.h; kvCacheManager.cpp,
  // getRemainingBlocksToCompletion: ceil((mPromptLen + mMaxNewTokens) / tokens_per_block)). A serving harness that sends the
  // engine's max_output_len with every request (NVIDIA's MLPerf llama2-70b harness: 1024) reserves
  // that much for answers of a few hundred tokens.
  int max_output_tokens = 0;
  double prefix_cache_hit_rate = 0.0;  // fraction of input tokens found in the prefix cache
  int replicas = 1;
  struct Disaggregation {
    bool enabled = false;
    int prefill_gpus = 0;
    int decode_gpus = 0;
    bool operator==(const Disaggregation&) const = default;
  } disaggregation;
  struct Slo {
    Seconds ttft;   // 0: no SLO on first-token latency
    Seconds tpot;   // 0: no SLO on time per output token
    bool operator==(const Slo&) const = default;
  } slo;
  bool operator==(const ServingWorkload&) const = default;
};

struct InferenceWorkload {
  InferenceMode mode = InferenceMode::static_batch;
  int batch = 1;
  int input_len = 128;
  int output_len = 128;
  bool cuda_graphs = true;
  DecodeAttention decode_attention = DecodeAttention::grouped;
  ServingWorkload serving;   // used when mode == serving
  bool operator==(const InferenceWorkload&) const = default;
};

}  // namespace stepcast
