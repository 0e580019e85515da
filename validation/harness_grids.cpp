#include "validation/harness_grids.h"

#include <algorithm>
#include <sstream>

namespace stepcast {

namespace {

bool wanted(const std::vector<std::string>& filter, std::string_view name) {
  return filter.empty() || std::find(filter.begin(), filter.end(), name) != filter.end();
}

struct DenseModel {
  const char* name;
  std::int64_t hidden, heads, kv_heads, head_dim, ffn;
};
// Llama 3 Herd of Models (2024), Table 3.
constexpr DenseModel kLlama3_8b{"llama3-8b", 4096, 32, 8, 128, 14336};
constexpr DenseModel kLlama3_70b{"llama3-70b", 8192, 64, 8, 128, 28672};
constexpr DenseModel kLlama3_405b{"llama3-405b", 16384, 128, 8, 128, 53248};
// Mixtral 8x22B attention: hidden 6144, 48 heads, 8 KV heads of 128 (Mistral AI's published
// config.json; the expert FFN 16384 is used below).
constexpr DenseModel kMixtral8x22b{"mixtral-8x22b", 6144, 48, 8, 128, 16384};
constexpr std::int64_t kLlama3Vocab = 128256;
constexpr std::int64_t kGpt2Vocab = 50257;  // odd: the logits GEMM's ldc is misaligned

// Tokens per micro-batch for the layer GEMMs: 4 sequences of 2048, or 1 of 8192.
constexpr std::int64_t kLayerTokens = 8192;

// The forward GEMMs of one layer with tensor parallelism `tp`: (role, out features, in features).
struct LayerGemm {
  std::string role;
  std::int64_t out, in;
};
std::vector<LayerGemm> layer_gemms(const DenseModel& model, std::int64_t tp) {
  const std::int64_t qkv = model.hidden + 2 * model.kv_heads * model.head_dim;
  return {{"qkv", qkv / tp, model.hidden},
          {"attn_out", model.hidden, model.hidden / tp},
          {"fc1", 2 * model.ffn / tp, model.hidden},  // SwiGLU gate and up projections fused
          {"fc2", model.hidden, model.ffn / tp}};
}

std::string model_role(const DenseModel& model, std::int64_t tp, const std::string& role) {
  std::string s = std::string(model.name) + " " + role;
  if (tp > 1) s += " tp" + std::to_string(tp);
  return s;
}

}  // namespace

GemmInputs gemm_point(DataType precision, const std::string& layout, std::int64_t m, std::int64_t n, std::int64_t k,
                      const std::string& role, std::int64_t groups) {
  GemmInputs g;
  g.precision = precision;
  g.layout = layout;
  g.m = m;
  g.n = n;
  g.k = k;
  g.groups = groups;
  g.role = role;
  switch (precision) {
    case DataType::fp32: g.a_type = g.b_type = g.c_type = "fp32"; g.compute_type = "fp32"; break;
    case DataType::tf32: g.a_type = g.b_type = g.c_type = "fp32"; g.compute_type = "tf32"; break;
    case DataType::fp16: g.a_type = g.b_type = g.c_type = "fp16"; g.compute_type = "fp32"; break;
    case DataType::fp8:
      // Transformer Engine's recipe: E4M3 weights and activations, BF16 output (cuBLASLt's FP8 GEMMs
      // need the TN layout on Hopper and Ada).
      g.a_type = g.b_type = "e4m3";
      g.c_type = "bf16";
      g.compute_type = "fp32";
      break;
    case DataType::int8: g.a_type = g.b_type = "int8"; g.c_type = "int32"; g.compute_type = "int32"; break;
    default: g.a_type = g.b_type = g.c_type = "bf16"; g.compute_type = "fp32"; break;
  }
  return g;
}

std::vector<GemmInputs> gemm_grid(const HarnessOptions& options) {
  std::vector<DataType> precisions;
  // FP8 second: a --max-wall budget that cuts the grid still reaches it (bf16 and FP8 are what
  // training runs use; cuBLASLt's FP8 set-up is the least proven part of the harness).
  for (DataType t : {DataType::bf16, DataType::fp8, DataType::fp16, DataType::tf32, DataType::fp32, DataType::int8}) {
    if (wanted(options.precisions, to_string(t))) precisions.push_back(t);
  }
  std::vector<GemmInputs> grid;
  for (DataType p : precisions) {
    const bool fp32_class = p == DataType::fp32 || p == DataType::tf32;
    // Square sweep: tile-aligned sizes and unaligned ones (for tile and wave quantization).
    std::vector<std::int64_t> squares;
    if (options.quick) {
      squares = {1024, 4096};
    } else {
      squares = {512, 1000, 1024, 2048, 2500, 3072, 4096, 5000, 6144, 8192};
      if (!fp32_class) squares.insert(squares.end(), {10000, 12288, 16384});  // FP32 at 16K^3 takes seconds
    }
    for (std::int64_t s : squares) grid.push_back(gemm_point(p, "TN", s, s, s));

    // The forward GEMMs of real layers: C = W x, m = out features, n = tokens, k = in features.
    const std::vector<std::pair<DenseModel, std::int64_t>> layers =
        options.quick ? std::vector<std::pair<DenseModel, std::int64_t>>{{kLlama3_8b, 1}}
                      : std::vector<std::pair<DenseModel, std::int64_t>>{{kLlama3_8b, 1}, {kLlama3_70b, 8}};
    for (const auto& [model, tp] : layers) {
      for (const LayerGemm& l : layer_gemms(model, tp)) {
        if (options.quick && l.role != "qkv") continue;
        grid.push_back(gemm_point(p, "TN", l.out, kLayerTokens, l.in, model_role(model, tp, l.role)));
      }
    }
    if (options.quick) continue;
    if (p == DataType::bf16 || p == DataType::fp16 || p == DataType::fp8) {
      for (const LayerGemm& l : layer_gemms(kLlama3_405b, 8)) {
        grid.push_back(gemm_point(p, "TN", l.out, kLayerTokens, l.in, model_role(kLlama3_405b, 8, l.role)));
      }
    }
    if (p == DataType::bf16 || p == DataType::fp16) {
      // Leading dimensions whose byte size is not a multiple of 16 (cuBLASLt's TMA kernels need
      // 16-byte-aligned rows): on an H200, bf16 2500^3 (5000 B rows) ran at 160 TFLOP/s against
      // ~720 for aligned shapes. Odd sizes, multiples of 2 and of 4 but not of 8, small and large.
      // In TN, lda = ldb = k and ldc = m; n sets no leading dimension.
      const std::vector<std::int64_t> misaligned = p == DataType::bf16
                                                       ? std::vector<std::int64_t>{1026, 2047, 3002, 4100, 8191}
                                                       : std::vector<std::int64_t>{1026, 2047, 4100};
      for (std::int64_t s : misaligned) grid.push_back(gemm_point(p, "TN", s, s, s));
      if (p == DataType::bf16) {
        grid.push_back(gemm_point(p, "TN", 4100, kLayerTokens, 4096, "misaligned m only"));
        grid.push_back(gemm_point(p, "TN", 4096, kLayerTokens, 4100, "misaligned k only"));
        grid.push_back(gemm_point(p, "TN", 4096, kLayerTokens - 1, 4096, "odd n only"));
        grid.push_back(gemm_point(p, "TN", kGpt2Vocab, 4096, 4096, "gpt2-vocab logits"));
      }
      // Backward of the Llama 3 8B layer: data gradient dX = W^T dY (NN: m = in, k = out) and
      // weight gradient dW = X dY^T (NT: m = in, n = out, k = tokens).
      for (const LayerGemm& l : layer_gemms(kLlama3_8b, 1)) {
        grid.push_back(gemm_point(p, "NN", l.in, kLayerTokens, l.out, model_role(kLlama3_8b, 1, l.role + " dgrad")));
        grid.push_back(gemm_point(p, "NT", l.in, l.out, kLayerTokens, model_role(kLlama3_8b, 1, l.role + " wgrad")));
      }
    }
    if (p == DataType::bf16) {
      grid.push_back(gemm_point(p, "TN", kLlama3Vocab, kLayerTokens, kLlama3_8b.hidden, "llama3-8b logits"));
    }
    if (p == DataType::fp8) {
      // FP8 data gradients take E5M2 gradients against E4M3 weights (Transformer Engine's hybrid format).
      for (const LayerGemm& l : layer_gemms(kLlama3_8b, 1)) {
        GemmInputs g = gemm_point(p, "TN", l.in, kLayerTokens, l.out, model_role(kLlama3_8b, 1, l.role + " dgrad"));
        g.b_type = "e5m2";
        grid.push_back(g);
      }
    }
    if (p == DataType::bf16 || p == DataType::fp8) {
      // MoE expert GEMMs as groups of equal products. Mixtral 8x7B: 8192 tokens x top-2 over 8
      // experts = 2048 tokens each. DeepSeek-V3 with EP=8: 32 local experts, 8192 x top-8 / 256 =
      // 256 tokens each, expert FFN 2048 (SwiGLU: fc1 out 4096).
      grid.push_back(gemm_point(p, "TN", 2 * 14336, 2048, 4096, "mixtral-8x7b expert fc1", 8));
      grid.push_back(gemm_point(p, "TN", 4096, 2048, 14336, "mixtral-8x7b expert fc2", 8));
      grid.push_back(gemm_point(p, "TN", 2 * 2048, 256, 7168, "deepseek-v3 expert fc1 ep8", 32));
      grid.push_back(gemm_point(p, "TN", 7168, 256, 2048, "deepseek-v3 expert fc2 ep8", 32));
      // Skinnier experts, more groups. DeepSeek-V3 with EP=4 on 4096 tokens: 64 local experts,
      // 4096 x 8 / 256 = 128 tokens each; and at decode-like 2048 tokens with EP=8, 64 each.
      // Qwen3-30B-A3B (hidden 2048, 128 experts, top-8, expert FFN 768; Qwen3 technical report,
      // 2025) with EP=2: 64 local experts, 8192 x 8 / 128 = 512 tokens each.
      grid.push_back(gemm_point(p, "TN", 2 * 2048, 128, 7168, "deepseek-v3 expert fc1 ep4", 64));
      grid.push_back(gemm_point(p, "TN", 7168, 128, 2048, "deepseek-v3 expert fc2 ep4", 64));
      grid.push_back(gemm_point(p, "TN", 2 * 2048, 64, 7168, "deepseek-v3 expert fc1 ep8 decode", 32));
      grid.push_back(gemm_point(p, "TN", 2 * 768, 512, 2048, "qwen3-30b-a3b expert fc1 ep2", 64));
      grid.push_back(gemm_point(p, "TN", 2048, 512, 768, "qwen3-30b-a3b expert fc2 ep2", 64));
      // Wide experts, few groups: Mixtral 8x22B (expert FFN 16384) on 4096 tokens x top-2 / 8 =
      // 1024 tokens each; DBRX (hidden 6144, 16 experts, top-4, FFN 10752; Databricks, 2024),
      // 4096 x 4 / 16 = 1024 tokens each.
      grid.push_back(gemm_point(p, "TN", 2 * 16384, 1024, 6144, "mixtral-8x22b expert fc1", 8));
      grid.push_back(gemm_point(p, "TN", 2 * 10752, 1024, 6144, "dbrx expert fc1", 16));

      // Attention projections. Mixtral 8x22B (GQA): qkv out 6144 + 2 x 8 x 128 = 8192.
      for (const LayerGemm& l : layer_gemms(kMixtral8x22b, 1)) {
        if (l.role != "qkv" && l.role != "attn_out") continue;
        grid.push_back(gemm_point(p, "TN", l.out, kLayerTokens, l.in, model_role(kMixtral8x22b, 1, l.role)));
      }
      // DeepSeek-V3's multi-head latent attention (DeepSeek-AI 2024, Sec. 4.2: 128 heads of 128,
      // KV compression 512, query compression 1536, decoupled RoPE 64): the down-projections of
      // the query (7168 -> 1536) and of KV plus the shared RoPE key (7168 -> 512 + 64), the
      // up-projections (1536 -> 128 x (128 + 64); 512 -> 128 x (128 + 128)) and the output
      // (128 x 128 -> 7168).
      grid.push_back(gemm_point(p, "TN", 1536, kLayerTokens, 7168, "deepseek-v3 mla q_down"));
      grid.push_back(gemm_point(p, "TN", 512 + 64, kLayerTokens, 7168, "deepseek-v3 mla kv_down"));
      grid.push_back(gemm_point(p, "TN", 128 * (128 + 64), kLayerTokens, 1536, "deepseek-v3 mla q_up"));
      grid.push_back(gemm_point(p, "TN", 128 * (128 + 128), kLayerTokens, 512, "deepseek-v3 mla kv_up"));
      grid.push_back(gemm_point(p, "TN", 7168, kLayerTokens, 128 * 128, "deepseek-v3 mla out"));
    }
  }
  return grid;
}

std::vector<AttentionInputs> attention_grid(const HarnessOptions& options) {
  std::vector<AttentionInputs> grid;
  // --ops selects by direction (forward, backward, decode): run.sh measures the backward points
  // in a process of their own, so a failure there cannot take the forward grid with it.
  const auto add = [&](const char* impl, AttentionDirection dir, std::int64_t batch, std::int64_t heads,
                       std::int64_t kv_heads, std::int64_t seq, std::int64_t d, bool causal,
                       DataType dtype = DataType::bf16) {
    if (!wanted(options.ops, to_string(dir))) return;
    AttentionInputs a;
    a.impl = impl;
    a.direction = dir;
    a.dtype = dtype;
    a.batch = batch;
    a.heads = heads;
    a.kv_heads = kv_heads;
    a.seq_q = seq;
    a.seq_kv = seq;
    a.head_dim = d;
    a.causal = causal;
    grid.push_back(a);
  };
  const auto add_decode = [&](std::int64_t batch, std::int64_t heads, std::int64_t kv_heads, std::int64_t context) {
    if (!wanted(options.ops, "decode")) return;
    AttentionInputs a;
    a.impl = "stepcast_paged_decode";
    a.direction = AttentionDirection::decode;
    a.batch = batch;
    a.heads = heads;
    a.kv_heads = kv_heads;
    a.seq_q = 1;
    a.seq_kv = context;
    a.head_dim = 128;
    a.causal = true;
    a.kv_block = 16;  // vLLM's default block size
    grid.push_back(a);
  };
  constexpr const char* kCudnn = "cudnn_sdpa";
  constexpr const char* kOwn = "stepcast_flash";
  constexpr auto kFwd = AttentionDirection::forward;
  constexpr auto kBwd = AttentionDirection::backward;

  if (options.quick) {
    add(kCudnn, kFwd, 8, 32, 8, 2048, 128, true);
    add(kOwn, kFwd, 8, 32, 8, 2048, 128, true);
    add_decode(16, 32, 8, 2048);
    add(kOwn, kBwd, 8, 32, 8, 2048, 128, true);
    add(kCudnn, kBwd, 8, 32, 8, 2048, 128, true);
    return grid;
  }

  // cuDNN's fused SDPA (what frameworks run, and what calibration fits) over the shapes the
  // simulator prices: head dim 64 and 128, 512 to 32768 tokens, batch 1 to 32, causal and not,
  // MHA and GQA (Llama 3 8B 32/8, 70B 64/8, 70B at TP=8 8/1; GPT-style 16/16 and 32/32 at d 64
  // and 128), bf16 and a few fp16. Forward points first, then stepcast's own kernel on a few
  // shapes (about 2% of peak: validated, never fitted), then decode, then every backward point.
  struct Shape {
    std::int64_t batch, heads, kv_heads, seq, d;
    bool causal;
    DataType dtype;
  };
  const auto bf = DataType::bf16;
  const auto fp = DataType::fp16;
  std::vector<Shape> forward_shapes;
  // Llama 3 8B attention at 16384 tokens per call, every sequence length from 512 to 16384.
  for (std::int64_t s : {512, 1024, 2048, 4096, 8192, 16384}) {
    for (bool causal : {true, false}) forward_shapes.push_back({16384 / s, 32, 8, s, 128, causal, bf});
  }
  forward_shapes.insert(forward_shapes.end(), {
      {1, 32, 8, 512, 128, true, bf},      // one short sequence: a launch-bound point
      {1, 32, 8, 2048, 128, true, bf},     // batch 1: few CTAs per SM
      {32, 32, 8, 4096, 128, true, bf},    // batch 32: 131072 tokens
      {1, 32, 8, 32768, 128, true, bf},    // long context
      {2, 64, 8, 4096, 128, true, bf},     // Llama 3 70B
      {1, 64, 8, 8192, 128, false, bf},
      {2, 8, 1, 8192, 128, true, bf},      // Llama 3 70B at TP=8 (MQA per GPU)
      {8, 8, 1, 2048, 128, false, bf},
      {4, 32, 32, 4096, 128, true, bf},    // Llama 2 7B (MHA, d 128)
      {8, 16, 16, 2048, 64, true, bf},     // GPT-style MHA, d 64
      {8, 16, 16, 2048, 64, false, bf},
      {16, 32, 32, 1024, 64, true, bf},
      {2, 32, 32, 8192, 64, true, bf},
      {32, 16, 16, 512, 64, false, bf},
      {8, 32, 8, 2048, 128, true, fp},     // fp16
      {4, 16, 16, 4096, 64, false, fp},
  });
  for (const Shape& s : forward_shapes) add(kCudnn, kFwd, s.batch, s.heads, s.kv_heads, s.seq, s.d, s.causal, s.dtype);
  // stepcast's own kernels: a few shapes (seconds each at its speed).
  const std::vector<Shape> own_shapes = {
      {16, 32, 8, 1024, 128, true, bf}, {4, 32, 8, 4096, 128, true, bf}, {4, 32, 8, 4096, 128, false, bf},
      {8, 16, 16, 2048, 64, true, bf}};
  for (const Shape& s : own_shapes) add(kOwn, kFwd, s.batch, s.heads, s.kv_heads, s.seq, s.d, s.causal, s.dtype);
  // Decode over a paged KV cache.
  for (std::int64_t b : {1, 16, 64, 128}) {
    for (std::int64_t ctx : {1024, 8192}) add_decode(b, 32, 8, ctx);
  }
  add_decode(64, 8, 1, 4096);  // Llama 3 70B at TP=8
  // Backward: stepcast's own kernel on its shapes, then cuDNN's (about 2.5x a forward's time).
  for (const Shape& s : own_shapes) add(kOwn, kBwd, s.batch, s.heads, s.kv_heads, s.seq, s.d, s.causal, s.dtype);
  const std::vector<Shape> backward_shapes = {
      {32, 32, 8, 512, 128, true, bf},   {16, 32, 8, 1024, 128, true, bf}, {16, 32, 8, 1024, 128, false, bf},
      {8, 32, 8, 2048, 128, true, bf},   {8, 32, 8, 2048, 128, false, bf}, {4, 32, 8, 4096, 128, true, bf},
      {2, 32, 8, 8192, 128, true, bf},   {2, 32, 8, 8192, 128, false, bf}, {1, 32, 8, 16384, 128, true, bf},
      {1, 32, 8, 2048, 128, true, bf},   {2, 64, 8, 4096, 128, true, bf},  {2, 8, 1, 8192, 128, true, bf},
      {4, 32, 32, 4096, 128, true, bf},  {8, 16, 16, 2048, 64, true, bf},  {8, 16, 16, 2048, 64, false, bf},
      {2, 32, 32, 8192, 64, true, bf},   {8, 32, 8, 2048, 128, true, fp}};
  for (const Shape& s : backward_shapes) add(kCudnn, kBwd, s.batch, s.heads, s.kv_heads, s.seq, s.d, s.causal, s.dtype);
  return grid;
}

std::vector<ElementwiseInputs> elementwise_grid(const HarnessOptions& options) {
  std::vector<ElementwiseInputs> grid;
  const std::vector<std::string> ops = {"rmsnorm", "layernorm", "softmax", "swiglu", "gelu", "rope", "bias_dropout_add"};
  const std::vector<std::int64_t> rows = options.quick ? std::vector<std::int64_t>{4096}
                                                       : std::vector<std::int64_t>{2048, 16384};
  const std::vector<std::int64_t> cols = options.quick ? std::vector<std::int64_t>{4096}
                                                       : std::vector<std::int64_t>{4096, 8192};
  for (const auto& op : ops) {
    if (!wanted(options.ops, op)) continue;
    for (std::int64_t r : rows) {
      for (std::int64_t c : cols) grid.push_back({op, DataType::bf16, r, c});
    }
    if (!options.quick && (op == "rmsnorm" || op == "softmax")) grid.push_back({op, DataType::fp32, 16384, 4096});
  }
  return grid;
}

std::vector<MemoryInputs> memory_grid(const HarnessOptions& options) {
  std::vector<MemoryInputs> grid;
  const std::vector<std::int64_t> mib = options.quick ? std::vector<std::int64_t>{64, 256}
                                                      : std::vector<std::int64_t>{4, 16, 64, 256, 1024, 4096};
  for (const char* op : {"copy", "triad"}) {
    for (std::int64_t m : mib) grid.push_back({op, DataType::fp32, m * 1024 * 1024 / 4});
  }
  for (std::int64_t m : options.quick ? std::vector<std::int64_t>{256} : std::vector<std::int64_t>{256, 1024}) {
    grid.push_back({"memcpy_d2d", DataType::fp32, m * 1024 * 1024 / 4});
  }
  return grid;
}

std::vector<std::int64_t> collective_sizes(const HarnessOptions& options) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t s = options.min_bytes; s <= options.max_bytes; s *= options.size_factor) {
    sizes.push_back(s);
    if (s > options.max_bytes / options.size_factor) break;
  }
  return sizes;
}

std::vector<CollectiveOp> collective_ops(const HarnessOptions& options) {
  std::vector<CollectiveOp> ops;
  for (CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::all_gather, CollectiveOp::reduce_scatter,
                          CollectiveOp::all_to_all, CollectiveOp::broadcast, CollectiveOp::send_recv}) {
    if (wanted(options.ops, to_string(op))) ops.push_back(op);
  }
  return ops;
}

std::vector<int> collective_group_sizes(const HarnessOptions& options, int available) {
  std::vector<int> sizes;
  if (!options.ranks.empty()) {
    for (int r : options.ranks) {
      if (r <= available) sizes.push_back(r);
    }
    return sizes;
  }
  for (int r = 2; r < available; r *= 2) sizes.push_back(r);
  if (available >= 2) sizes.push_back(available);
  return sizes;
}

CollectiveCounts collective_counts(CollectiveOp op, std::int64_t size_bytes, int ranks) {
  const auto total = static_cast<std::size_t>(size_bytes) / sizeof(float);
  const std::size_t chunk = total / static_cast<std::size_t>(ranks);
  const std::size_t whole = chunk * static_cast<std::size_t>(ranks);
  switch (op) {
    case CollectiveOp::all_gather: return {chunk, whole, chunk};
    case CollectiveOp::reduce_scatter: return {whole, chunk, chunk};
    case CollectiveOp::all_to_all: return {whole, whole, chunk};
    default: return {total, total, total};
  }
}

std::string point_name(const MeasurementInputs& inputs) {
  std::ostringstream s;
  if (const auto* g = std::get_if<GemmInputs>(&inputs)) {
    s << "gemm " << to_string(g->precision);
    if (g->precision == DataType::fp8) s << " " << g->a_type << "x" << g->b_type;
    s << " " << g->layout << " m=" << g->m << " n=" << g->n << " k=" << g->k;
    if (g->batch > 1) s << " batch=" << g->batch;
    if (g->groups > 1) s << " groups=" << g->groups;
    if (!g->role.empty()) s << " (" << g->role << ")";
  } else if (const auto* a = std::get_if<AttentionInputs>(&inputs)) {
    s << "attention " << to_string(a->direction) << " " << a->impl << " " << to_string(a->dtype) << " b=" << a->batch
      << " h=" << a->heads << "/" << a->kv_heads << " sq=" << a->seq_q << " skv=" << a->seq_kv << " d=" << a->head_dim
      << (a->causal ? " causal" : "");
    if (a->kv_block > 0) s << " block=" << a->kv_block;
  } else if (const auto* e = std::get_if<ElementwiseInputs>(&inputs)) {
    s << e->op << " " << to_string(e->dtype) << " " << e->rows << "x" << e->cols;
  } else if (const auto* m = std::get_if<MemoryInputs>(&inputs)) {
    s << m->op << " " << to_string(m->dtype) << " " << m->elements << " elements";
  } else if (const auto* c = std::get_if<CollectiveInputs>(&inputs)) {
    s << to_string(c->op) << " " << c->size_bytes << " B ranks=" << c->ranks << " nodes=" << c->nodes;
  } else if (const auto* t = std::get_if<SelftestInputs>(&inputs)) {
    s << "selftest " << t->test;
  }
  return s.str();
}

}  // namespace stepcast
