// Mixture of experts and multi-head latent attention: parameter counts against the published
// totals, FLOPs and per-rank kernels against their formulas, routing load, all-to-all bytes,
// expert placement and the MoE terms of a training prediction.
#include <doctest/doctest.h>

#include <string>

#include "model/activation_memory.h"
#include "model/flops.h"
#include "model/layer_ops.h"
#include "model/layer_shape.h"
#include "model/moe_ops.h"
#include "model/op_time.h"
#include "model/parameter_count.h"
#include "simulator/catalog.h"
#include "simulator/layer_costs.h"
#include "simulator/layer_kernels.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"
#include "tests/support/catalog_model.h"
#include "tests/support/compute_only_layer.h"
#include "tests/support/op_lookup.h"

using namespace stepcast;

namespace {

using test::catalog_model;

// One layer shape of `model` as make_layer_shape() builds it for the given split.
LayerShape shape_of(const TransformerSpec& model, int tp, int ep, int expert_tp, bool sequence_parallel,
                    int micro_batch = 1, int seq = 4096) {
  TrainingWorkload w;
  w.seq_len = seq;
  w.micro_batch = micro_batch;
  w.global_batch = micro_batch;
  ParallelConfig p;
  p.tp = tp;
  p.ep = ep;
  p.expert_tp = expert_tp;
  p.sequence_parallel = sequence_parallel;
  PrecisionConfig precision;
  return make_layer_shape(model, w, p, precision);
}

double gemm_and_attention_flops(const OpList& ops) {
  double f = 0.0;
  for (const Op& op : ops) {
    if (op.kind == OpKind::gemm || op.kind == OpKind::flash_forward) f += op.flops.value();
  }
  return f;
}

double ops_flops_named(const OpList& ops, std::string_view prefix) {
  double f = 0.0;
  for (const Op& op : ops) {
    if (std::string_view(op.name).starts_with(prefix)) f += op.flops.value();
  }
  return f;
}

}  // namespace

// --- Parameter counts against the model cards and papers -------------------------------------

TEST_CASE("DeepSeek-V3 has 671B parameters of which 37B are active per token") {
  // DeepSeek-V3 technical report (arXiv:2412.19437), Sec. 1 and Sec. 4.2: 671B total, 37B
  // activated, the multi-token-prediction module (14B) excluded. Our count: MLA 187M per layer,
  // 3 dense layers (SwiGLU 18432: 396M), 58 MoE layers (256 x 3 x 7168 x 2048 = 11.27B routed, one
  // shared expert 44M, router 1.8M), embeddings 2 x 129280 x 7168.
  const TransformerSpec& m = catalog_model("deepseek-v3");
  CHECK(total_parameters(m) == doctest::Approx(671e9).epsilon(0.01));
  CHECK(active_parameters(m) == doctest::Approx(37e9).epsilon(0.02));
  CHECK(moe_layer_count(m) == 58);
}

TEST_CASE("DeepSeek-V3 with its multi-token-prediction module has 685B parameters, 14B of them the module's") {
  // Hugging Face deepseek-ai/DeepSeek-V3 model card: "685B ..., which includes 671B of the Main Model
  // weights and 14B of the Multi-Token Prediction (MTP) Module weights"; config num_nextn_predict_layers
  // 1. The checkpoint stores the module with its own copies of the shared embedding and output head
  // (2 x 129280 x 7168 = 1.85B); the module itself (report Sec. 2.2): one MoE block (MLA 187M, 256
  // routed experts 11.27B, shared expert 44M, router 1.8M), the projection M 2 x 7168^2 = 103M and
  // three RMSNorms: 11.6B. With the two copies 13.5B, against the card's 14B, a difference of two
  // rounded figures (685 - 671); 5% tolerance on it, 1% on the 685B total.
  const TransformerSpec& m = catalog_model("deepseek-v3");
  CHECK(m.mtp_depth == 1);
  CHECK(mtp_block_is_moe(m));
  const double copies = embedding_parameters(m) + output_layer_parameters(m);
  CHECK(mtp_parameters(m) == doctest::Approx(11.6e9).epsilon(0.01));
  CHECK(mtp_parameters(m) + copies == doctest::Approx(14e9).epsilon(0.05));
  CHECK(total_parameters(m) + mtp_parameters(m) + copies == doctest::Approx(685e9).epsilon(0.01));
  // No other catalog model trains with one (its depth 0 and no parameters).
  CHECK(mtp_parameters(catalog_model("qwen3-235b-a22b")) == 0.0);
  CHECK(catalog_model("llama3-405b").mtp_depth == 0);
}

TEST_CASE("Mixtral 8x7B has 46.7B parameters, 12.9B active; 8x22B 141B, 39B active") {
  // Jiang et al. 2024 "Mixtral of Experts" Sec. 2 / Mistral AI's announcement: 46.7B total,
  // 12.9B used per token. Mistral AI "Cheaper, Better, Faster, Stronger" (Mixtral 8x22B): 141B
  // total, 39B active.
  CHECK(total_parameters(catalog_model("mixtral-8x7b")) == doctest::Approx(46.7e9).epsilon(0.01));
  CHECK(active_parameters(catalog_model("mixtral-8x7b")) == doctest::Approx(12.9e9).epsilon(0.01));
  CHECK(total_parameters(catalog_model("mixtral-8x22b")) == doctest::Approx(141e9).epsilon(0.01));
  CHECK(active_parameters(catalog_model("mixtral-8x22b")) == doctest::Approx(39e9).epsilon(0.015));
}

TEST_CASE("Qwen3-235B-A22B and Qwen3-30B-A3B have the totals and active counts their names give") {
  // Qwen3 Technical Report (arXiv:2505.09388) Table 2 and the Hugging Face model cards:
  // 235B total / 22B activated; 30.5B total / 3.3B activated.
  CHECK(total_parameters(catalog_model("qwen3-235b-a22b")) == doctest::Approx(235e9).epsilon(0.01));
  CHECK(active_parameters(catalog_model("qwen3-235b-a22b")) == doctest::Approx(22e9).epsilon(0.02));
  CHECK(total_parameters(catalog_model("qwen3-30b-a3b")) == doctest::Approx(30.5e9).epsilon(0.01));
  CHECK(active_parameters(catalog_model("qwen3-30b-a3b")) == doctest::Approx(3.3e9).epsilon(0.02));
}

TEST_CASE("Grok-1 has 314B parameters, about a quarter of them active per token") {
  // xai-org/grok-1 README: 314B parameters, 8 experts, 2 per token; xAI's release ("Open Release of
  // Grok-1", x.ai, March 2024): "25% of the weights active on a given token". Our count: attention
  // 6144 (6144 + 2 x 1024 + 6144) = 88.1M, 8 GeGLU experts (counted as SwiGLU: three matrices)
  // 8 x 3 x 6144 x 32768 = 4.83B and the router 49K per layer, 64 layers 314.9B; one tied
  // 131072 x 6144 embedding 0.8B: 315.7B. Active: 2 experts, 1.30B a layer, 83.7B (26.5%).
  const TransformerSpec& m = catalog_model("grok-1");
  CHECK(m.tied_embeddings);
  CHECK(moe_layer_count(m) == 64);
  CHECK(total_parameters(m) == doctest::Approx(314e9).epsilon(0.01));
  CHECK(active_parameters(m) / total_parameters(m) == doctest::Approx(0.25).epsilon(0.07));
  // The DGX Cloud proxy run (untied, Llama 3's 128256 vocabulary) adds an output layer: 316.5B.
  TransformerSpec proxy = m;
  proxy.vocab = 128256;
  proxy.tied_embeddings = false;
  CHECK(total_parameters(proxy) == doctest::Approx(316.5e9).epsilon(0.002));
}

TEST_CASE("a rank holds its E/(ep x expert_tp) share of the routed experts and a 1/tp share of attention") {
  const TransformerSpec& m = catalog_model("mixtral-8x7b");
  const LayerParameters whole = layer_parameters(m, true);
  // 8 experts of 3 x 4096 x 14336 SwiGLU matrices; router h x E.
  CHECK(whole.experts == doctest::Approx(8.0 * 3 * 4096 * 14336));
  CHECK(whole.router == doctest::Approx(4096.0 * 8));
  const LayerParametersPerRank r = layer_parameters_per_rank(m, 2, true, 4, 1);
  CHECK(r.experts == doctest::Approx(whole.experts / 4));
  CHECK(r.dense == doctest::Approx(whole.attention / 2 + whole.router + whole.norms));
}

// --- FLOPs ------------------------------------------------------------------------------------

TEST_CASE("a MoE layer's model FLOPs count the top_k routed and the shared experts, and the router") {
  // 2 m b s h f_e (top_k + shared) with m = 3 for SwiGLU, plus the router 2 b s h E.
  const TransformerSpec& m = catalog_model("deepseek-v3");
  const double b = 2;
  const double s = 4096;
  const LayerFlops f = layer_forward_flops(m, b, s, AttentionCount::causal, true);
  CHECK(f.mlp.value() == doctest::Approx(2.0 * 3 * b * s * 7168 * 2048 * (8 + 1)));
  CHECK(f.router.value() == doctest::Approx(2.0 * b * s * 7168 * 256));
  // MLA: q down/up, kv down/up, output, and the core with q/k width 192 and v width 128.
  const double qkv = 7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * (512 + 64) + 512.0 * 128 * (128 + 128);
  CHECK(f.qkv.value() == doctest::Approx(2.0 * b * s * qkv));
  CHECK(f.attention.value() == doctest::Approx(0.5 * 2.0 * b * s * s * 128 * (192 + 128)));
  CHECK(f.out_proj.value() == doctest::Approx(2.0 * b * s * 128 * 128 * 7168));
  // A dense layer of the same model keeps its 18432-wide MLP and no router.
  const LayerFlops dense = layer_forward_flops(m, b, s, AttentionCount::causal, false);
  CHECK(dense.mlp.value() == doctest::Approx(2.0 * 3 * b * s * 7168 * 18432));
  CHECK(dense.router.value() == 0.0);
}

TEST_CASE("one rank's MoE and MLA kernels do the layer's FLOPs when nothing is split") {
  // tp = ep = 1, dropless, perfectly balanced: the grouped expert GEMMs run b s top_k rows in
  // total, so the kernels' FLOPs equal layer_forward_flops(causal) term for term.
  for (const char* name : {"deepseek-v3", "mixtral-8x7b", "qwen3-30b-a3b", "grok-1"}) {
    CAPTURE(name);
    const TransformerSpec& m = catalog_model(name);
    const LayerShape s = moe_layer_shape(shape_of(m, 1, 1, 1, false, 1, 4096));
    const LayerFlops f = layer_forward_flops(m, 1, 4096, AttentionCount::causal, true);
    CHECK(gemm_and_attention_flops(layer_forward_ops(s)) == doctest::Approx(f.total().value()).epsilon(1e-9));
  }
}

TEST_CASE("with tp, ep and sequence parallelism each rank does 1/tp of the routed experts' FLOPs") {
  // The rank's b s / t tokens go out top_k times; its E/ep experts receive, summed over the EP
  // and expert-TP group, tokens x top_k x ep x expert_tp / E copies each, at width f / expert_tp:
  // per rank 6 (b s / t) top_k h f, 1/t of the layer's routed-expert FLOPs.
  const TransformerSpec& m = catalog_model("mixtral-8x7b");
  const double T = 2.0 * 4096;
  for (int expert_tp : {1, 2}) {
    CAPTURE(expert_tp);
    const LayerShape s = moe_layer_shape(shape_of(m, 2, 4, expert_tp, true, 2, 4096));
    const OpList ops = layer_forward_ops(s);
    const double experts = ops_flops_named(ops, "experts_");
    CHECK(experts == doctest::Approx(2.0 * 3 * T * 4096 * 14336 * 2 / 2.0));
  }
}

// --- Routing ----------------------------------------------------------------------------------

TEST_CASE("dropless routing scales the busiest rank's expert rows by the load imbalance, capacity pads to it") {
  TransformerSpec m = catalog_model("mixtral-8x7b");
  const LayerShape balanced = moe_layer_shape(shape_of(m, 1, 8, 1, false, 1, 4096));
  MoeRouting r = moe_routing(balanced);
  // 4096 tokens x top-2 over 8 experts on 8 ranks: each expert gets 4096 x 2 x 8 / 8 = 8192 rows
  // (the whole EP group's tokens), one expert per rank.
  CHECK(r.local_experts == 1.0);
  CHECK(r.expert_rows == doctest::Approx(8192.0));
  CHECK(r.sent == doctest::Approx(8192.0));
  m.moe.load_imbalance = 1.3;
  r = moe_routing(moe_layer_shape(shape_of(m, 1, 8, 1, false, 1, 4096)));
  CHECK(r.expert_rows == doctest::Approx(8192.0 * 1.3));
  m.moe.capacity_factor = 1.25;  // a fixed capacity replaces the imbalance: padded buffers
  r = moe_routing(moe_layer_shape(shape_of(m, 1, 8, 1, false, 1, 4096)));
  CHECK(r.expert_rows == doctest::Approx(8192.0 * 1.25));
}

TEST_CASE("the dispatch all-to-all moves each token's hidden state top_k times, in 16 bits") {
  // nccl-tests convention: the rank's whole send buffer, tokens x top_k x h x 2 bytes.
  const TransformerSpec& m = catalog_model("qwen3-30b-a3b");
  const LayerShape s = moe_layer_shape(shape_of(m, 1, 8, 1, false, 2, 4096));
  CHECK(moe_all_to_all_bytes(s).value() == doctest::Approx(2.0 * 4096 * 8 * 2048 * 2));
  CHECK(moe_expert_tp_bytes(s).value() == 0.0);
  // With expert TP 2 the received rows are also all-gathered over the expert-TP pair.
  const LayerShape etp = moe_layer_shape(shape_of(m, 2, 4, 2, true, 2, 4096));
  CHECK(moe_expert_tp_bytes(etp).value() == doctest::Approx(moe_routing(etp).rows * 2048 * 2));
}

TEST_CASE("a MoE layer keeps the router probabilities and its experts' rows as activations") {
  // Mixtral 8x7B, tp = ep = 1, b s = 4096 tokens: the dense 14336-wide MLP keeps
  // 2 b s (2 f + f) bytes; the MoE layer keeps FP32 probabilities 4 b s E, the k b s token copies'
  // FC1 inputs (2 h each) and their SwiGLU input and output (2 x 3 f each).
  const TransformerSpec& m = catalog_model("mixtral-8x7b");
  const LayerShape dense = shape_of(m, 1, 1, 1, false);
  const LayerShape moe = moe_layer_shape(dense);
  const double T = 4096;
  const double expected_extra = 4.0 * T * 8 + 2.0 * (2 * T) * (4096 + 3.0 * 14336) - 2.0 * T * 3.0 * 14336;
  const double d = layer_activation_bytes(moe, Recompute::none).stored.value() -
                   layer_activation_bytes(dense, Recompute::none).stored.value();
  CHECK(d == doctest::Approx(expected_extra));
}

TEST_CASE("under FP8 a MoE layer keeps its token copies and expert activation outputs as one byte each") {
  // Mixtral 8x7B, tp = ep = 1, b s = T = 4096 tokens, top-2: the experts' FC1 input (2T x h) and
  // FC2 input (2T x f, the SwiGLU output) are GEMM inputs TE's GroupedLinear saves quantized
  // (grouped_linear.py: column-wise usage only), 1 byte instead of 2; the SwiGLU input (2T x 2f)
  // and the router's input stay 16-bit. Attention: the QKV input loses T h, the projection's input
  // gains the linear's T h copy (q_width = h). So FP8 keeps 2T (h + f) bytes less.
  const TransformerSpec& m = catalog_model("mixtral-8x7b");
  LayerShape moe = moe_layer_shape(shape_of(m, 1, 1, 1, false));
  const double bf16 = layer_activation_bytes(moe, Recompute::none).stored.value();
  moe.compute = DataType::fp8;
  const double fp8 = layer_activation_bytes(moe, Recompute::none).stored.value();
  const double T = 4096;
  CHECK(bf16 - fp8 == doctest::Approx(2 * T * (4096 + 14336)));
  // Recomputing moe_act drops the activation output: 2T f bytes under FP8 (2 x 2T f in BF16).
  RecomputeModules act = RecomputeModules::empty();
  act.add(RecomputeModule::moe_act);
  CHECK(fp8 - layer_activation_bytes(moe, Recompute::selective, act).stored.value() ==
        doctest::Approx(2 * T * 14336));
  // A shared expert keeps its SwiGLU input (2 x 2f, 16-bit) and output (f, FP8) per token, and
  // its FC1 quantizes the pre-MLP norm output once more (h): T (5 f + h) bytes.
  LayerShape shared = moe;
  shared.moe.shared_experts = 1;
  CHECK(layer_activation_bytes(shared, Recompute::none).stored.value() - fp8 ==
        doctest::Approx(T * (5 * 14336 + 4096)));
}

// --- Placement and the prediction ---------------------------------------------------------------

TEST_CASE("expert parallelism is priced: all-to-alls exposed, hidden by ep_comm_overlap, experts' states on edp") {
  Scenario sc = load_scenario("mixtral-8x7b-ep");  // 16 H100s, tp 2, ep 8 (expert_tp follows tp)
  TrainingPredictor predictor;
  const TrainingPrediction base = predictor.predict(sc);
  CHECK(base.time.ep_comm_exposed.value() > 0.0);
  CHECK(base.time.total().value() == doctest::Approx(base.step_time.value()).epsilon(1e-9));
  sc.parallel.ep_comm_overlap = true;
  const TrainingPrediction overlapped = predictor.predict(sc);
  CHECK(overlapped.time.ep_comm_exposed < base.time.ep_comm_exposed);
  // expert_tp 2 x ep 8 = 16 ranks: one expert replica, so the experts' optimizer states are not
  // sharded by ZeRO-1 while the dense weights' are (over dp 8).
  bool listed = false;
  for (const auto& g : base.placement) listed = listed || g.group == "ep";
  CHECK(listed);
  // Mixtral 8x7B: per rank 32 layers x 1 expert / expert_tp 2 = 2.82B routed parameters at 12
  // bytes of Adam state, unsharded.
  const double experts = 32.0 * 3 * 4096 * 14336 / 2;
  CHECK(base.memory.optimizer_states.value() > 12.0 * experts);
  CHECK(base.memory.optimizer_states.value() < 12.0 * experts * 1.05);
}

TEST_CASE("a dense model is predicted the same whatever ep and expert_tp say") {
  Scenario sc = load_scenario("llama3-70b-h100");
  TrainingPredictor predictor;
  const double base = predictor.predict(sc).step_time.value();
  sc.parallel.expert_tp = 1;
  CHECK(predictor.predict(sc).step_time.value() == doctest::Approx(base).epsilon(1e-12));
}

// --- Transformer Engine's grouped experts, FP8 casts, the dispatcher's host synchronization ------

TEST_CASE("the experts' GEMMs are launched once per local expert, and FP8 quantizes each expert's inputs") {
  // Qwen3-30B-A3B, ep 8: 128 / 8 = 16 local experts; 4096 tokens x top-8 x ep 8 / 128 = 2048 rows
  // per expert, 16 x 2048 = 32768 rows on the rank.
  const TransformerSpec& m = catalog_model("qwen3-30b-a3b");
  LayerShape s = moe_layer_shape(shape_of(m, 1, 8, 1, false, 1, 4096));
  s.compute = DataType::fp8;
  s.fp8_scaling = Fp8Scaling::current;
  const OpList forward = layer_forward_ops(s);
  const OpList backward = layer_backward_ops(s);
  int grouped = 0;
  for (const OpList* ops : {&forward, &backward}) {
    for (const Op& op : *ops) {
      if (std::string_view(op.name).starts_with("experts_fc")) {
        CHECK(op.launches == 16.0);
        ++grouped;
      }
    }
  }
  CHECK(grouped == 6);  // FC1 and FC2 forward, their data and weight gradients
  const double rows = 16.0 * 2048;
  const double h = 2048;
  const double f = 768;
  bool cast_forward = false;
  bool cast_backward = false;
  for (const Op& op : forward) {
    if (op.name != "experts_fp8_casts") continue;
    cast_forward = true;
    // FC1's input (rows x h) and FC2's (rows x f), current scaling: amax pass 2 + cast 3 bytes.
    CHECK(op.bytes.value() == doctest::Approx(rows * (h + f) * 5.0));
    CHECK(op.launches == 32.0);
  }
  for (const Op& op : backward) {
    if (op.name != "experts_fp8_casts.backward") continue;
    cast_backward = true;
    // Output gradients of FC2 (rows x h) and FC1 (rows x 2f, SwiGLU) with transposes (2 + 3 + 1),
    // plus the transposed copies of the saved inputs (1 byte each).
    CHECK(op.bytes.value() == doctest::Approx(rows * (h + 2.0 * f) * 6.0 + rows * (h + f) * 1.0));
  }
  CHECK(cast_forward);
  CHECK(cast_backward);
}

TEST_CASE("a dropless MoE layer over EP synchronizes with the host before its all-to-all; capacity mode does not") {
  const TransformerSpec& m = catalog_model("qwen3-30b-a3b");
  const LayerShape ep8 = moe_layer_shape(shape_of(m, 1, 8, 1, false, 1, 4096));
  CHECK(moe_forward_host_sync(ep8));
  CHECK_FALSE(moe_forward_host_sync(moe_layer_shape(shape_of(m, 1, 1, 1, false, 1, 4096))));
  CHECK_FALSE(moe_forward_host_sync(shape_of(m, 1, 8, 1, false, 1, 4096)));  // the dense layer kind
  LayerShape capacity = ep8;
  capacity.moe.capacity_factor = 1.25;
  CHECK_FALSE(moe_forward_host_sync(capacity));
  // The synchronization point is an op of the forward.
  bool found = false;
  for (const Op& op : layer_forward_ops(ep8)) found = found || op.name == kMoeHostSyncAfter;
  CHECK(found);
}

TEST_CASE("after the dispatcher's host synchronization a MoE forward runs at the host's Transformer Engine dispatch rate") {
  // Qwen3-30B-A3B, EP 8, one 4096-token micro-batch on a B200: the ops after moe_permute (the
  // sort, the FP8 padding, 16 experts' casts and GEMMs, ...) are dispatched from a standing start
  // at training_host_dispatch_s = 12 us x 2.69 per launch (TransformerEngine#2053), which is
  // longer than their GPU time; the ops before the synchronization run at GPU speed.
  const TransformerSpec& m = catalog_model("qwen3-30b-a3b");
  LayerShape s = moe_layer_shape(shape_of(m, 1, 8, 1, false, 1, 4096));
  s.compute = DataType::mxfp8;
  const GpuSpec* gpu = Catalog::builtin().find_gpu("b200");
  REQUIRE(gpu != nullptr);
  const CostParameters params;
  const LayerCostInputs in = test::compute_only_inputs(s, *gpu, params);
  const OpList forward = layer_forward_ops(s);
  const Op* sync = forward.begin();
  while (sync != forward.end() && sync->name != kMoeHostSyncAfter) ++sync;
  REQUIRE(sync != forward.end());
  ++sync;
  double gpu_after = 0.0;
  double launches_after = 0.0;
  for (const Op* op = sync; op != forward.end(); ++op) {
    gpu_after += op_time(*op, *gpu, params).value();
    launches_after += op->launches;
  }
  const double host_after = launches_after * params.training_host_dispatch_s();
  REQUIRE(host_after > gpu_after);  // the stretch is host-bound
  const Seconds before = ops_time(forward.begin(), sync, *gpu, params, Seconds(params.training_host_dispatch_s()));
  CHECK(layer_costs(in).layer_forward.compute.value() == doctest::Approx(before.value() + host_after));
}

TEST_CASE("QK-norm: Qwen3's per-head RMSNorms of the queries and keys, priced as two fused norms each way") {
  // Megatron-Bridge Qwen3MoEModelProvider sets qk_layernorm; Megatron-Core's SelfAttention then
  // runs Transformer Engine RMSNorms over head_dim on the query and key heads after the QKV
  // projection. Qwen3-30B-A3B (32 query heads, 4 KV heads, head_dim 128), one 4096-token sequence,
  // TP 2: per rank 16 query heads and 2 KV heads, so 4096 x (16 + 2) x 128 = 9.437M elements.
  // A fused norm reads x and writes y (2 x 2 bytes forward); its backward reads dy and x and writes
  // dx with the weight gradient folded in (4 x 2 bytes): 37.7 MB forward, 75.5 MB backward.
  const TransformerSpec& qwen = catalog_model("qwen3-30b-a3b");
  REQUIRE(qwen.qk_norm);
  const LayerShape s = moe_layer_shape(shape_of(qwen, 2, 1, 1, true));
  const double elements = 4096.0 * (16.0 + 2.0) * 128.0;
  const auto norm = test::forward_and_backward_op(s, "qk_norm");
  REQUIRE(norm);
  CHECK(norm->forward.kind == OpKind::reduction);
  CHECK(norm->forward.bytes.value() == doctest::Approx(elements * 4.0));
  CHECK(norm->backward.bytes.value() == doctest::Approx(elements * 8.0));
  CHECK(norm->forward.launches == 2.0);  // one kernel for the queries, one for the keys
  // The norm keeps its input, the projected queries and keys: 2 bytes per element more per layer.
  LayerShape plain = s;
  plain.qk_norm = false;
  CHECK(test::find_op(layer_forward_ops(plain), "qk_norm") == nullptr);
  CHECK((layer_activation_bytes(s, Recompute::none).stored - layer_activation_bytes(plain, Recompute::none).stored)
            .value() == doctest::Approx(elements * 2.0));
  // Models without it (GPT-OSS, Llama) and MLA (DeepSeek-V3 normalizes its latents instead) run none.
  CHECK_FALSE(catalog_model("gpt-oss-120b").qk_norm);
  CHECK(test::find_op(layer_forward_ops(shape_of(catalog_model("deepseek-v3"), 1, 1, 1, false)), "qk_norm") == nullptr);
}

TEST_CASE("FP8 MoE layers copy the experts' rows into and out of the per-expert padded buffer, forward and backward") {
  // TEGroupedMLP runs Transformer Engine's Fp8Padding before FC1 and Fp8Unpadding after FC2 in FP8
  // training; with dropless routing the per-expert counts are whatever the router sent, so the
  // copies run. Qwen3-30B-A3B, one 4096-token sequence, EP 8: each rank's 16 local experts receive
  // 4096 x 8 = 32768 token copies, each copy of the rows reads and writes 32768 x 2048 x 2 bytes:
  // 268.4 MB per pass, four passes per layer (padding and unpadding, and their backward).
  const TransformerSpec& qwen = catalog_model("qwen3-30b-a3b");
  LayerShape s = moe_layer_shape(shape_of(qwen, 1, 8, 1, false));
  s.compute = DataType::fp8;
  const double copy_bytes = 32768.0 * 2048.0 * 2.0 * 2.0;
  const auto bytes_of = [](const OpList& ops, std::string_view name) {
    const Op* op = test::find_op(ops, name);
    return op != nullptr ? op->bytes.value() : -1.0;
  };
  const OpList forward = layer_forward_ops(s);
  const OpList backward = layer_backward_ops(s);
  CHECK(bytes_of(forward, "experts_fp8_padding") == doctest::Approx(copy_bytes));
  CHECK(bytes_of(forward, "experts_fp8_unpadding") == doctest::Approx(copy_bytes));
  CHECK(bytes_of(backward, "experts_fp8_padding.backward") == doctest::Approx(copy_bytes));
  CHECK(bytes_of(backward, "experts_fp8_unpadding.backward") == doctest::Approx(copy_bytes));
  // BF16 experts take the rows as they are.
  LayerShape bf16 = s;
  bf16.compute = DataType::bf16;
  CHECK(bytes_of(layer_forward_ops(bf16), "experts_fp8_padding") < 0.0);
  CHECK(bytes_of(layer_backward_ops(bf16), "experts_fp8_padding.backward") < 0.0);
  // A fixed capacity pads every expert to the same count: aligned (2048 rows with capacity factor
  // 1, a multiple of 16) needs no copy; 1.1 x 2048 = 2252.8 rows is not aligned and is copied.
  LayerShape capacity = s;
  capacity.moe.capacity_factor = 1.0;
  CHECK(bytes_of(layer_forward_ops(capacity), "experts_fp8_padding") < 0.0);
  capacity.moe.capacity_factor = 1.1;
  CHECK(bytes_of(layer_forward_ops(capacity), "experts_fp8_padding") > 0.0);
}

TEST_CASE("experts with biases add FC2's probability-weighted bias in PyTorch, per expert, forward and backward") {
  // GPT-OSS (add_bias_linear): TEGroupedMLP._apply_bias runs cat([t + b * p]).to(bf16) over the
  // experts' FC2 output. One 4096-token sequence, EP 8: 4096 x 4 = 16384 token copies on the rank's
  // 16 local experts, 16384 x 2880 output elements; 28 bytes each forward (b*p in FP32 4, the add
  // 2 + 4 + 4, the cat 8, the cast 6) and 36 backward (the casts 6 + 6, two multiply-reduce pairs
  // 12 + 12), as moe_ops.cpp derives them from PyTorch's type promotion.
  const TransformerSpec& oss = catalog_model("gpt-oss-120b");
  REQUIRE(oss.linear_bias);
  const LayerShape s = moe_layer_shape(shape_of(oss, 1, 8, 1, false));
  const double elements = 16384.0 * 2880.0;
  const auto bias = test::forward_and_backward_op(s, "experts_fc2_bias");
  REQUIRE(bias);
  CHECK(bias->forward.bytes.value() == doctest::Approx(28.0 * elements));
  CHECK(bias->backward.bytes.value() == doctest::Approx(36.0 * elements));
  CHECK(bias->forward.launches == 2.0 * 16.0 + 2.0);   // product and sum per expert; cat and cast
  CHECK(bias->backward.launches == 5.0 * 16.0 + 1.0);  // cast and two multiply-reduce pairs per expert; cast
  // Experts without biases (Qwen3) add nothing.
  const LayerShape qwen = moe_layer_shape(shape_of(catalog_model("qwen3-30b-a3b"), 1, 8, 1, false));
  const OpList qwen_forward = layer_forward_ops(qwen);
  CHECK(test::find_op(qwen_forward, "experts_fc2_bias") == nullptr);
}

TEST_CASE("a clamped gated activation (GPT-OSS) pays Megatron-Core's clamps and cat around the experts' activation") {
  // Megatron-Core weighted_bias_quick_geglu_impl (fused_bias_geglu.py) with activation_func_clamp_value:
  // input.chunk(2) -> clamp each half -> torch.cat, in PyTorch before the fused activation. One
  // 4096-token sequence, EP 8: 16384 token copies on the rank's 16 experts, FC1 output 2 x 2880
  // wide, 2 bytes per element. Forward: two clamps read and write a half each (2 x 2 x 2880) and the
  // cat reads and writes both halves (4 x 2880): 8 x 2880 elements per row. Backward: each clamp's
  // backward reads the gradient and its saved input and writes the masked gradient (2 x 3 x 2880),
  // chunk's backward cats the halves (4 x 2880): 10 x 2880. Three kernels each way.
  const TransformerSpec& oss = catalog_model("gpt-oss-120b");
  REQUIRE(oss.activation_clamp == 7.0);
  const LayerShape s = moe_layer_shape(shape_of(oss, 1, 8, 1, false));
  REQUIRE(moe_activation_clamped(s));
  const double row_elements = 16384.0 * 2880.0;
  const auto clamp = test::forward_and_backward_op(s, "experts_glu_clamp");
  REQUIRE(clamp);
  CHECK(clamp->forward.bytes.value() == doctest::Approx(8.0 * row_elements * 2.0));
  CHECK(clamp->backward.bytes.value() == doctest::Approx(10.0 * row_elements * 2.0));
  CHECK(clamp->forward.launches == 3.0);
  CHECK(clamp->backward.launches == 3.0);
  CHECK(clamp->forward.kind == OpKind::data_movement);
  // Recomputing the experts' activation (moe_act) re-runs the clamps with it.
  RecomputeModules moe_act = RecomputeModules::empty();
  moe_act.add(RecomputeModule::moe_act);
  const OpList recompute = selective_recompute_forward_ops(s, moe_act);
  CHECK(test::find_op(recompute, "experts_glu_clamp") != nullptr);
  CHECK(test::find_op(recompute, "experts_swiglu") != nullptr);
  // Without the clamp, or without a gate, nothing is added.
  TransformerSpec unclamped = oss;
  unclamped.activation_clamp = 0.0;
  const LayerShape u = moe_layer_shape(shape_of(unclamped, 1, 8, 1, false));
  const OpList unclamped_forward = layer_forward_ops(u);
  const OpList unclamped_backward = layer_backward_ops(u);
  CHECK(test::find_op(unclamped_forward, "experts_glu_clamp") == nullptr);
  CHECK(test::find_op(unclamped_backward, "experts_glu_clamp.backward") == nullptr);
  TransformerSpec ungated = oss;
  ungated.mlp = MlpKind::gelu;
  CHECK_FALSE(moe_activation_clamped(moe_layer_shape(shape_of(ungated, 1, 8, 1, false))));
  // TE's fused grouped MLP (MXFP8, grouped GEMMs) applies the activation in FC1's epilogue: no
  // PyTorch clamp is priced there.
  LayerShape fused = s;
  fused.compute = DataType::mxfp8;
  fused.moe_grouped_gemm = MoeGroupedGemm::grouped;
  CHECK_FALSE(moe_activation_clamped(fused));
}

TEST_CASE("a clamped activation keeps one more FC1 output for the backward unless moe_act is recomputed") {
  // The clamps save FC1's output (their input) and the fused activation saves the clamped copy:
  // 16384 rows x 2 x 2880 more 16-bit elements per layer. Megatron-Core's moe_act checkpoint keeps
  // only FC1's output, the same with or without the clamp.
  const TransformerSpec& oss = catalog_model("gpt-oss-120b");
  TransformerSpec unclamped = oss;
  unclamped.activation_clamp = 0.0;
  const LayerShape s = moe_layer_shape(shape_of(oss, 1, 8, 1, false));
  const LayerShape u = moe_layer_shape(shape_of(unclamped, 1, 8, 1, false));
  const double copy = 2.0 * 16384.0 * 2.0 * 2880.0;
  CHECK(layer_activation_bytes(s, Recompute::none).stored.value() -
            layer_activation_bytes(u, Recompute::none).stored.value() ==
        doctest::Approx(copy));
  RecomputeModules moe_act = RecomputeModules::empty();
  moe_act.add(RecomputeModule::moe_act);
  CHECK(layer_activation_bytes(s, Recompute::selective, moe_act).stored.value() ==
        doctest::Approx(layer_activation_bytes(u, Recompute::selective, moe_act).stored.value()));
}

TEST_CASE("GPT-OSS's clamped activation synchronizes the host once more: the forward is three stretches") {
  // Megatron-Core weighted_bias_quick_geglu_impl builds torch.tensor(linear_offset, device=cuda)
  // on every call, a blocking host-to-device copy (PyTorch copy_kernel_cuda -> memcpy_and_sync:
  // cudaMemcpyAsync, cudaStreamSynchronize). With the all-to-all dispatcher's token-count sync the
  // MoE forward is three stretches: up to the permutation, up to the clamps, and the rest, each
  // max(GPU time, launches x training_host_dispatch_s) (simulator/layer_kernels.h).
  const TransformerSpec& oss = catalog_model("gpt-oss-120b");
  const LayerShape s = moe_layer_shape(shape_of(oss, 1, 8, 1, false));
  REQUIRE(moe_forward_host_sync(s));
  REQUIRE(moe_activation_host_sync(s));
  const GpuSpec* gpu = Catalog::builtin().find_gpu("h100-sxm-80gb");
  REQUIRE(gpu != nullptr);
  const CostParameters params;
  const LayerCostInputs in = test::compute_only_inputs(s, *gpu, params);
  const LayerKernels k = layer_kernels(in);
  REQUIRE(k.forward.stretch_count == 3);
  const KernelStretch& third = k.forward.stretches[2];
  CHECK(k.forward.ops[third.begin - 1].name == kMoeActivationHostSyncAfter);
  CHECK(k.forward.ops[k.forward.stretches[1].begin - 1].name == kMoeHostSyncAfter);
  // The third stretch: the fused activation, FC2 (16 experts), the per-expert bias, the un-sort and
  // the un-permutation, dispatched from a standing start.
  double gpu_after = 0.0;
  double launches_after = 0.0;
  for (int i = third.begin; i < k.forward.ops.size(); ++i) {
    gpu_after += k.forward.op_time(i).value();
    launches_after += k.forward.ops[i].launches;
  }
  CHECK(third.gpu.value() == doctest::Approx(gpu_after));
  CHECK(third.host.value() == doctest::Approx(launches_after * params.training_host_dispatch_s()));
  Seconds sum(0.0);
  for (int i = 0; i < 3; ++i) sum += max(k.forward.stretches[static_cast<std::size_t>(i)].gpu, k.forward.stretches[static_cast<std::size_t>(i)].host);
  CHECK(k.forward.time().value() == doctest::Approx(sum.value()));
  // Unclamped, the layer keeps its two stretches.
  TransformerSpec unclamped = oss;
  unclamped.activation_clamp = 0.0;
  const LayerShape u = moe_layer_shape(shape_of(unclamped, 1, 8, 1, false));
  CHECK(layer_kernels(test::compute_only_inputs(u, *gpu, params)).forward.stretch_count == 2);
}
