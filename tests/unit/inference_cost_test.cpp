// The inference step cost: KV and weight bytes from their formulas, where the roofline puts
// decode and prefill, what quantization and GQA buy, and the per-step communication and launch
// terms.

#include <doctest/doctest.h>

#include <cmath>

#include "model/inference_ops.h"
#include "model/inference_shape.h"
#include "model/op_time.h"
#include "model/parameter_count.h"
#include "model/placement.h"
#include "simulator/collective_models.h"
#include "simulator/inference/step_cost.h"
#include "simulator/scenario_loader.h"

namespace stepcast {
namespace {

Scenario scenario(const std::string& model, const std::string& gpu, int gpus, int tp, const std::string& precision,
                  const std::string& extra_inference = "", int pp = 1) {
  return parse_scenario("schema_version: 1\nmodel: " + model + "\nsystem: {gpu: " + gpu +
                            ", gpus: " + std::to_string(gpus) + "}\nparallel: {tp: " + std::to_string(tp) +
                            ", pp: " + std::to_string(pp) + "}\nprecision: " + precision +
                            "\ninference: {mode: static, batch: 1, input_len: 128, output_len: 128" + extra_inference +
                            "}\n",
                        "test.yaml");
}

// A step cost model together with the collective model it prices with.
struct Steps {
  explicit Steps(const Scenario& s)
      : net(make_collective_model(default_collective_model(), s.system, CostParameters{})),
        model(s, *net, CostParameters{}, InferenceCostParameters{}) {}
  std::unique_ptr<CollectiveModel> net;
  StepCostModel model;
};

StepWork decode_work(double sequences, double context_each) {
  StepWork w;
  w.tokens = sequences;
  w.decode_sequences = sequences;
  w.decode_context = sequences * context_each;
  w.logit_rows = sequences;
  return w;
}

StepWork prefill_work(double sequences, double prompt) {
  StepWork w;
  for (int i = 0; i < static_cast<int>(sequences); ++i) w.prefill.add_chunk(prompt, 0.0);
  w.tokens = sequences * prompt;
  w.logit_rows = sequences;
  return w;
}

}  // namespace

TEST_CASE("KV bytes per token per layer are 2 g d bytes, split over TP ranks and replicated beyond g") {
  const InferenceCostParameters p;
  // Llama 2 7B, FP16 cache: 2 * 32 heads * 128 * 2 bytes = 16 KiB per layer, 512 KiB over 32 layers.
  const Scenario llama2 = scenario("llama2-7b", "h100-sxm-80gb", 1, 1, "fp16");
  const InferenceShape s = make_inference_shape(llama2.model, llama2.parallel, llama2.precision, p);
  CHECK(kv_bytes_per_token_layer(s).value() == 16384.0);
  CHECK(kv_bytes_per_token_per_gpu(s).value() == 32.0 * 16384.0);
  // FP8 cache: half.
  const Scenario fp8 = scenario("llama2-7b", "h100-sxm-80gb", 1, 1, "{compute: fp8, params: fp8, kv_cache: fp8}");
  CHECK(kv_bytes_per_token_layer(make_inference_shape(fp8.model, fp8.parallel, fp8.precision, p)).value() == 8192.0);
  // Llama 3 70B (g = 8) over tp = 8: one KV head per rank, 2 * 128 * 2 = 512 bytes per layer.
  const Scenario l3 = scenario("llama3-70b", "h100-sxm-80gb", 8, 8, "bf16");
  const InferenceShape s8 = make_inference_shape(l3.model, l3.parallel, l3.precision, p);
  CHECK(kv_bytes_per_token_layer(s8).value() == 2.0 * 8 * 128 * 2);
  CHECK(kv_bytes_per_token_layer_per_rank(s8).value() == 512.0);
  // tp = 16 > g = 8: each rank keeps a replica of its KV head, still 512 bytes.
  const Scenario l3_16 = scenario("llama3-70b", "h100-sxm-80gb", 16, 16, "bf16");
  CHECK(kv_bytes_per_token_layer_per_rank(make_inference_shape(l3_16.model, l3_16.parallel, l3_16.precision, p))
            .value() == 512.0);
}

TEST_CASE("MLA caches the latent and the RoPE key, whole on every TP rank") {
  TransformerSpec m;
  m.layers = 2;
  m.hidden = 5120;
  m.heads = 128;
  m.kv_heads = 128;
  m.head_dim = 128;
  m.ffn_hidden = 12288;
  m.vocab = 102400;
  m.mlp = MlpKind::swiglu;
  m.mla = MlaSpec{1536, 512, 128, 64, 128};  // DeepSeek-V2 (arXiv:2405.04434, Appendix B.1)
  ParallelConfig par;
  par.tp = 8;
  PrecisionConfig prec = precision_shorthand(DataType::bf16);
  const InferenceShape s = make_inference_shape(m, par, prec, {});
  // (d_c + d_h^R) * 2 bytes = (512 + 64) * 2 = 1152 bytes per layer, the same on each of 8 ranks.
  CHECK(kv_bytes_per_token_layer(s).value() == 1152.0);
  CHECK(kv_bytes_per_token_layer_per_rank(s).value() == 1152.0);
  // Decode attention over 1000 cached tokens reads 1000 latents per layer.
  const Op decode = decode_attention_op(s, 1.0, 1000.0);
  CHECK(decode.bytes.value() >= 1000.0 * 1152.0);
  CHECK(decode.bytes.value() < 1000.0 * 1152.0 * 1.05);
}

TEST_CASE("weight bytes: quantized layers at their width plus group scales, embeddings kept in 16 bits") {
  const InferenceCostParameters p;
  const Scenario bf16 = scenario("llama2-7b", "h100-sxm-80gb", 1, 1, "bf16");
  const InferenceShape s16 = make_inference_shape(bf16.model, bf16.parallel, bf16.precision, p);
  // Every parameter in 2 bytes: 2 * total_parameters (which also counts the final norm's 4096).
  CHECK(weight_bytes_per_gpu(s16).value() == doctest::Approx(2.0 * total_parameters(bf16.model)).epsilon(1e-6));
  const Scenario int4 = scenario("llama2-7b", "h100-sxm-80gb", 1, 1, "int4");
  const InferenceShape s4 = make_inference_shape(int4.model, int4.parallel, int4.precision, p);
  CHECK(s4.weight_only);
  // Linear weights: 32 layers * (4 h^2 + 3 h f) at 0.5 + 4/128 bytes; norms and 2 V h in 2 bytes.
  const double h = 4096, f = 11008, V = 32000;
  const double linear = 32.0 * (4.0 * h * h + 3.0 * h * f);
  const double sixteen = 32.0 * 2.0 * h + 2.0 * V * h;
  CHECK(weight_bytes_per_gpu(s4).value() == doctest::Approx(linear * (0.5 + 4.0 / 128.0) + sixteen * 2.0));
}

TEST_CASE("a batch-1 decode step is bound by reading the weights once") {
  Steps steps(scenario("llama2-7b", "h100-sxm-80gb", 1, 1, "bf16"));
  const CostParameters cost;
  const InferenceCostParameters inference;
  const InferenceShape& s = steps.model.shape();
  // The weights once at the sustained HBM rate (all but the embedding table, of which a step
  // reads one row per token), every kernel's gap, one graph launch and the runtime's
  // per-iteration work; the KV read of 256 tokens (128 MiB) and activations add ~3%.
  const double embedding = 32000.0 * 4096.0 * 2.0;
  const double read = (weight_bytes_per_gpu(s).value() - embedding) / (3350e9 * cost.memory_bandwidth_eta);
  const double kernels = steps.model.kernels_per_step(false, true);
  const double expected = read + kernels * cost.kernel_gap_s + inference.graph_launch_s + inference.step_overhead_s;
  const double step = steps.model.time(decode_work(1, 256)).value();
  CHECK(step > expected);
  CHECK(step < 1.06 * expected);
}

TEST_CASE("batching amortizes the weight read until compute binds") {
  Steps steps(scenario("llama2-7b", "h100-sxm-80gb", 1, 1, "bf16"));
  const double one = steps.model.time(decode_work(1, 128)).value();
  const double sixteen = steps.model.time(decode_work(16, 128)).value();
  // 16 sequences cost little more than one: the weight GEMMs are memory-bound at m = 16.
  CHECK(sixteen < 1.15 * one);
  // Far past the ridge, a prefill of 8 x 1024 tokens is compute-bound: its weight GEMMs take
  // 2 * params * tokens FLOPs at the sustained GEMM rate (eta x derate x peak), within 15%
  // (norms, attention and kernel gaps add the rest).
  const CostParameters cost;
  const double tokens = 8.0 * 1024.0;
  const double flops = 2.0 * 32.0 * (4.0 * 4096.0 * 4096.0 + 3.0 * 4096.0 * 11008.0) * tokens;
  const double compute = flops / (989.4e12 * cost.gemm_eta_hopper_16bit * cost.sustained_derate);
  const StepBreakdown b = steps.model.breakdown(prefill_work(8, 1024));
  CHECK(b.linear.value() == doctest::Approx(compute).epsilon(0.15));
  CHECK(b.linear.value() > compute);
}

TEST_CASE("W8A8 FP8 halves compute-bound prefill; INT4 weight-only cuts memory-bound decode") {
  Steps bf16(scenario("llama2-7b", "h100-sxm-80gb", 1, 1, "bf16"));
  Steps fp8(scenario("llama2-7b", "h100-sxm-80gb", 1, 1, "fp8"));
  Steps int4(scenario("llama2-7b", "h100-sxm-80gb", 1, 1, "int4"));
  // Prefill of 8 x 2048 tokens: the FP8 peak is twice BF16's; the FP8 GEMM eta (0.74) is a bit
  // below Hopper's 16-bit one (0.79), and attention stays in BF16: 1.6x - 2.0x.
  const double prefill_ratio = bf16.model.breakdown(prefill_work(8, 2048)).linear /
                               fp8.model.breakdown(prefill_work(8, 2048)).linear;
  CHECK(prefill_ratio > 1.6);
  CHECK(prefill_ratio < 2.0);
  // Batch-1 decode: weights at 0.53 instead of 2 bytes (the output layer stays 16-bit): 3.6x
  // fewer bytes; the ~1.2 ms of kernel gaps both pay bring the step ratio to about 2.2.
  const double decode_ratio = bf16.model.time(decode_work(1, 256)) / int4.model.time(decode_work(1, 256));
  CHECK(decode_ratio > 2.0);
  // ...but a compute-bound INT4 weight-only prefill is slower than BF16 (dequantization).
  CHECK(int4.model.breakdown(prefill_work(8, 2048)).linear > bf16.model.breakdown(prefill_work(8, 2048)).linear);
}

TEST_CASE("decode attention grows linearly with the cached context it reads") {
  Steps steps(scenario("llama2-7b", "h100-sxm-80gb", 1, 1, "bf16"));
  const double a1 = steps.model.breakdown(decode_work(64, 2000)).attention.value();
  const double a2 = steps.model.breakdown(decode_work(64, 4000)).attention.value();
  // Memory-bound: twice the KV bytes, twice the time (less the fixed kernel gap per layer).
  CHECK(a2 / a1 == doctest::Approx(2.0).epsilon(0.02));
}

TEST_CASE("kernels without GQA sharing read each KV head once per query head") {
  Steps grouped(scenario("llama3-70b", "h100-sxm-80gb", 8, 8, "bf16"));
  Steps per_head(scenario("llama3-70b", "h100-sxm-80gb", 8, 8, "bf16", ", decode_attention: per-query-head"));
  const InferenceShape& s = grouped.model.shape();
  const Op g = decode_attention_op(s, 64.0, 64.0 * 4096.0);
  InferenceShape ph = s;
  ph.kv_read_per_query_head = true;
  const Op q = decode_attention_op(ph, 64.0, 64.0 * 4096.0);
  // 64 query heads over 8 KV heads: 8 reads of each KV head; the query/output bytes are the same.
  const double kv = 64.0 * 4096.0 * kv_bytes_per_token_layer_per_rank(s).value();
  CHECK(q.bytes.value() - g.bytes.value() == doctest::Approx(7.0 * kv));
  CHECK(per_head.model.breakdown(decode_work(64, 4096)).attention >
        grouped.model.breakdown(decode_work(64, 4096)).attention * 5.0);
}

TEST_CASE("tensor parallelism adds two all-reduces per layer, one for the embedding and a logits gather") {
  const Scenario s = scenario("llama3-70b", "h100-sxm-80gb", 8, 8, "bf16");
  Steps steps(s);
  const StepWork w = decode_work(32, 1024);
  const StepBreakdown b = steps.model.breakdown(w);
  const GroupLayout tp = layout_of(ParallelDim::tp, s.parallel, s.system);
  const Seconds reduce = steps.net->time(CollectiveOp::all_reduce, Bytes(32.0 * 8192.0 * 2.0), tp);
  const Seconds gather = steps.net->time(CollectiveOp::all_gather, Bytes(32.0 * 128256.0 * 2.0), tp);
  CHECK(b.tp_comm.value() == doctest::Approx((reduce * (2.0 * 80.0 + 1.0) + gather).value()));
  // Small decode messages are latency-bound: 32 tokens of 16 KiB each take microseconds, not
  // their bandwidth time of well under one.
  CHECK(reduce.value() > 2e-6);
  // The components add up to the step time.
  CHECK(b.total().value() == doctest::Approx(steps.model.time(w).value()));
}

TEST_CASE("without CUDA graphs a small step is bound by the host dispatching its kernels") {
  // INT4 Llama 2 7B on an H100: 3.6 GB of weights read in ~1.3 ms, less than the host needs
  // to dispatch its ~390 kernels at 12 us each.
  Steps graphs(scenario("llama2-7b", "h100-sxm-80gb", 1, 1, "int4"));
  Steps eager(scenario("llama2-7b", "h100-sxm-80gb", 1, 1, "int4", ", cuda_graphs: false"));
  const StepWork w = decode_work(1, 64);
  const CostParameters cost;
  const InferenceCostParameters inference;
  const double kernels = eager.model.kernels_per_step(false, true);
  CHECK(eager.model.time(w).value() >= kernels * cost.host_dispatch_s + inference.step_overhead_s);
  CHECK(eager.model.time(w) > graphs.model.time(w));
}

TEST_CASE("pipeline parallelism: a micro-batch's iteration passes every stage and the links between them") {
  const Scenario s = scenario("llama3-70b", "h100-sxm-80gb", 8, 4, "bf16", "", 2);
  Steps steps(s);
  const StepBreakdown b = steps.model.breakdown(decode_work(16, 512));
  CHECK(b.pp_comm.value() > 0.0);
  // 40 layers per stage, both stages: the per-layer cost counted 80 times, as with pp = 1 at tp = 4.
  Steps flat(scenario("llama3-70b", "h100-sxm-80gb", 4, 4, "bf16"));
  const StepBreakdown f = flat.model.breakdown(decode_work(16, 512));
  CHECK(b.linear.value() == doctest::Approx(f.linear.value()).epsilon(0.01));
  CHECK(b.attention.value() == doctest::Approx(f.attention.value()).epsilon(1e-9));
}

TEST_CASE("expert routing: top_k of E experts per token, all of them once enough tokens arrive") {
  const Scenario s = scenario("mixtral-8x7b", "h100-sxm-80gb", 2, 2, "bf16");
  const InferenceShape shape = make_inference_shape(s.model, s.parallel, s.precision, {});
  // One token reaches top_k = 2 of the 8 experts: 8 (1 - (1 - 2/8)^1) = 2.
  CHECK(active_experts_per_rank(shape, 1.0) == doctest::Approx(2.0));
  // 64 tokens reach all 8 but for (3/4)^64 ~ 1e-8.
  CHECK(active_experts_per_rank(shape, 64.0) == doctest::Approx(8.0));
  // Decoding one token reads 2 experts' weights, so it is much cheaper than 64 tokens' 8.
  Steps steps(s);
  const double one = steps.model.breakdown(decode_work(1, 256)).linear.value();
  const double many = steps.model.breakdown(decode_work(64, 256)).linear.value();
  CHECK(many > 2.5 * one);
}

}  // namespace stepcast
