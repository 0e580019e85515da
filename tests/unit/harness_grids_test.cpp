#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "validation/harness_grids.h"

using namespace stepcast;

TEST_CASE("the GEMM grid covers every precision with tile-aligned and unaligned squares") {
  HarnessOptions o;
  const auto grid = gemm_grid(o);
  std::set<DataType> precisions;
  for (const auto& g : grid) precisions.insert(g.precision);
  CHECK(precisions.size() == 6);
  const auto has_square = [&](DataType p, std::int64_t s) {
    return std::any_of(grid.begin(), grid.end(), [&](const GemmInputs& g) {
      return g.precision == p && g.m == s && g.n == s && g.k == s;
    });
  };
  CHECK(has_square(DataType::bf16, 4096));
  CHECK(has_square(DataType::bf16, 5000));  // not a multiple of any tile size
  CHECK(has_square(DataType::bf16, 16384));
  CHECK_FALSE(has_square(DataType::fp32, 16384));  // kept short: FP32 at 16K^3 takes seconds per sample
}

TEST_CASE("FP8 and INT8 GEMMs use the TN layout cuBLASLt requires and INT8 sizes are multiples of 4") {
  HarnessOptions o;
  for (const auto& g : gemm_grid(o)) {
    if (g.precision == DataType::fp8 || g.precision == DataType::int8) CHECK(g.layout == "TN");
    if (g.precision == DataType::int8) {
      CHECK(g.m % 4 == 0);
      CHECK(g.n % 4 == 0);
      CHECK(g.k % 4 == 0);
    }
  }
}

TEST_CASE("the transformer GEMMs follow the Llama 3 8B layer") {
  HarnessOptions o;
  o.precisions = {"bf16"};
  const auto grid = gemm_grid(o);
  const auto find = [&](const std::string& role) {
    return std::find_if(grid.begin(), grid.end(), [&](const GemmInputs& g) { return g.role == role; });
  };
  // QKV: out = hidden + 2 x kv_heads x head_dim = 4096 + 2 x 8 x 128 = 6144; in = 4096.
  const auto qkv = find("llama3-8b qkv");
  REQUIRE(qkv != grid.end());
  CHECK(qkv->m == 6144);
  CHECK(qkv->k == 4096);
  CHECK(qkv->n == 8192);
  // fc1 fuses SwiGLU's gate and up projections: out = 2 x 14336.
  CHECK(find("llama3-8b fc1")->m == 28672);
  // Weight gradient of fc2: dW (4096 x 14336) summed over 8192 tokens, NT layout.
  const auto wgrad = find("llama3-8b fc2 wgrad");
  REQUIRE(wgrad != grid.end());
  CHECK(wgrad->layout == "NT");
  CHECK(wgrad->k == 8192);
}

TEST_CASE("quick grids are small") {
  HarnessOptions o;
  o.quick = true;
  CHECK(gemm_grid(o).size() <= 20);
  CHECK(attention_grid(o).size() <= 6);
  CHECK(elementwise_grid(o).size() == 7);
  CHECK(memory_grid(o).size() <= 6);
}

TEST_CASE("attention grids hold cuDNN forward and backward points over the priced shapes, then paged decode") {
  HarnessOptions o;
  const auto grid = attention_grid(o);
  const auto count = [&](const char* impl, AttentionDirection d) {
    return std::count_if(grid.begin(), grid.end(),
                         [&](const AttentionInputs& a) { return a.impl == impl && a.direction == d; });
  };
  // Enough cuDNN points that a 5-fold cross-validation holds out several shapes per fold.
  CHECK(count("cudnn_sdpa", AttentionDirection::forward) >= 20);
  CHECK(count("cudnn_sdpa", AttentionDirection::backward) >= 12);
  // stepcast's own kernels (about 2% of peak) on a few shapes only.
  CHECK(count("stepcast_flash", AttentionDirection::forward) <= 4);
  CHECK(count("stepcast_flash", AttentionDirection::backward) <= 4);
  CHECK(std::count_if(grid.begin(), grid.end(), [](const AttentionInputs& a) {
          return a.direction == AttentionDirection::decode;
        }) >= 8);
  std::set<std::int64_t> seqs, dims, batches;
  bool gqa = false, mha = false, causal = false, full = false, fp16 = false;
  for (const auto& a : grid) {
    CHECK(a.heads % a.kv_heads == 0);
    if (a.direction == AttentionDirection::decode) {
      CHECK(a.seq_q == 1);
      CHECK(a.kv_block == 16);
      continue;
    }
    CHECK(a.kv_block == 0);
    if (a.impl != "cudnn_sdpa") continue;
    seqs.insert(a.seq_q);
    dims.insert(a.head_dim);
    batches.insert(a.batch);
    (a.heads == a.kv_heads ? mha : gqa) = true;
    (a.causal ? causal : full) = true;
    fp16 = fp16 || a.dtype == DataType::fp16;
  }
  CHECK(*seqs.begin() == 512);
  CHECK(*seqs.rbegin() >= 16384);
  CHECK(dims == std::set<std::int64_t>{64, 128});
  CHECK(*batches.begin() == 1);
  CHECK(*batches.rbegin() == 32);
  CHECK((gqa && mha && causal && full && fp16));
  // Every backward point comes after every forward and decode point, so a failing backward
  // cannot cut the forward grid short.
  const auto first_backward = std::find_if(grid.begin(), grid.end(), [](const AttentionInputs& a) {
    return a.direction == AttentionDirection::backward;
  });
  CHECK(std::all_of(first_backward, grid.end(),
                    [](const AttentionInputs& a) { return a.direction == AttentionDirection::backward; }));
}

TEST_CASE("--ops picks attention directions: run.sh measures the backward points in their own process") {
  HarnessOptions o;
  o.ops = {"backward"};
  const auto backward = attention_grid(o);
  CHECK(!backward.empty());
  for (const auto& a : backward) CHECK(a.direction == AttentionDirection::backward);
  o.ops = {"forward", "decode"};
  const auto rest = attention_grid(o);
  for (const auto& a : rest) CHECK(a.direction != AttentionDirection::backward);
  CHECK(rest.size() + backward.size() == attention_grid(HarnessOptions{}).size());
}

TEST_CASE("point names say what was measured") {
  CHECK(point_name(gemm_point(DataType::bf16, "TN", 1, 2, 3, "qkv")) == "gemm bf16 TN m=1 n=2 k=3 (qkv)");
  GemmInputs f = gemm_point(DataType::fp8, "TN", 8, 8, 8);
  f.b_type = "e5m2";
  CHECK(point_name(f) == "gemm fp8 e4m3xe5m2 TN m=8 n=8 k=8");
  CHECK(point_name(ElementwiseInputs{"gelu", DataType::bf16, 2, 3}) == "gelu bf16 2x3");
}

TEST_CASE("collective sizes follow nccl-tests: each op's buffers and per-rank count") {
  // 1 MiB of fp32 over 8 ranks = 262144 elements, 32768 per rank.
  const auto ar = collective_counts(CollectiveOp::all_reduce, 1 << 20, 8);
  CHECK(ar.send == 262144);
  CHECK(ar.recv == 262144);
  // all-gather: the size is the gathered output; each rank sends its 1/8.
  const auto ag = collective_counts(CollectiveOp::all_gather, 1 << 20, 8);
  CHECK(ag.send == 32768);
  CHECK(ag.recv == 262144);
  CHECK(ag.chunk == 32768);
  // reduce-scatter: the size is the whole input; each rank keeps 1/8.
  const auto rs = collective_counts(CollectiveOp::reduce_scatter, 1 << 20, 8);
  CHECK(rs.send == 262144);
  CHECK(rs.recv == 32768);
  // all-to-all: the size is the per-rank send buffer, one chunk per peer.
  const auto a2a = collective_counts(CollectiveOp::all_to_all, 1 << 20, 8);
  CHECK(a2a.send == 262144);
  CHECK(a2a.chunk == 32768);
  // 8 bytes cannot give 8 ranks an fp32 element each; 6 ranks round 1 MiB down to a multiple.
  CHECK(collective_counts(CollectiveOp::all_gather, 8, 8).chunk == 0);
  CHECK(collective_counts(CollectiveOp::all_gather, 1 << 20, 6).recv == 262140);
}

TEST_CASE("the GEMM grid holds bf16 and fp16 shapes whose rows are not 16-byte multiples") {
  // cuBLASLt's fastest Hopper kernels need 16-byte-aligned leading dimensions: 8 elements of a
  // 2-byte format. TN: lda = ldb = k, ldc = m.
  HarnessOptions o;
  const auto grid = gemm_grid(o);
  for (DataType p : {DataType::bf16, DataType::fp16}) {
    std::set<std::int64_t> residues;  // k mod 8 of the misaligned squares
    for (const auto& g : grid) {
      if (g.precision == p && g.m == g.n && g.n == g.k && g.k % 8 != 0) residues.insert(g.k % 8);
    }
    CHECK(residues.count(4) == 1);  // a multiple of 4, not of 8 (2500, 4100)
    CHECK(residues.count(2) == 1);  // a multiple of 2, not of 4 (1026, 3002)
    CHECK((residues.count(1) + residues.count(7)) >= 1);  // odd (2047, 8191)
  }
  const auto has_role = [&](const std::string& role) {
    return std::any_of(grid.begin(), grid.end(), [&](const GemmInputs& g) { return g.role == role; });
  };
  CHECK(has_role("misaligned m only"));
  CHECK(has_role("misaligned k only"));
  CHECK(has_role("odd n only"));
}

TEST_CASE("grouped MoE GEMMs span 64 to 2048 tokens per expert and 8 to 64 groups") {
  HarnessOptions o;
  o.precisions = {"bf16"};
  std::set<std::int64_t> tokens;
  std::set<std::int64_t> groups;
  for (const auto& g : gemm_grid(o)) {
    if (g.groups == 1) continue;
    tokens.insert(g.n);
    groups.insert(g.groups);
  }
  CHECK(*tokens.begin() == 64);
  CHECK(*tokens.rbegin() == 2048);
  CHECK(*groups.begin() == 8);
  CHECK(*groups.rbegin() == 64);
  CHECK(tokens.size() >= 5);
}

TEST_CASE("the GEMM grid holds Llama 3 405B at TP 8 and DeepSeek-V3's latent attention projections") {
  HarnessOptions o;
  o.precisions = {"fp8"};
  const auto grid = gemm_grid(o);
  const auto find = [&](const std::string& role) {
    return std::find_if(grid.begin(), grid.end(), [&](const GemmInputs& g) { return g.role == role; });
  };
  // qkv out = (16384 + 2 x 8 x 128) / 8 = 2304; fc2 in = 53248 / 8 = 6656.
  REQUIRE(find("llama3-405b qkv tp8") != grid.end());
  CHECK(find("llama3-405b qkv tp8")->m == 2304);
  CHECK(find("llama3-405b fc2 tp8")->k == 6656);
  // KV down-projection: 512 latent + 64 RoPE key = 576 outputs from hidden 7168.
  REQUIRE(find("deepseek-v3 mla kv_down") != grid.end());
  CHECK(find("deepseek-v3 mla kv_down")->m == 576);
  CHECK(find("deepseek-v3 mla kv_down")->k == 7168);
  // Every FP8 model shape keeps 16-byte rows (FP8: multiples of 16 elements), as cuBLASLt needs.
  for (const auto& g : grid) {
    if (g.role.empty()) continue;
    CHECK(g.m % 16 == 0);
    CHECK(g.k % 16 == 0);
  }
}
