// Static mode: one batch with fixed lengths. TTFT is the batch's prefill iteration, TPOT the mean
// decode iteration, throughput batch x output / end-to-end, and memory the batch's KV at full
// length on top of weights, activations and buffers.

#include <doctest/doctest.h>

#include "model/inference_shape.h"
#include "simulator/collective_models.h"
#include "simulator/inference/inference_predictor.h"
#include "simulator/inference/step_cost.h"
#include "simulator/scenario_loader.h"

namespace stepcast {
namespace {

Scenario static_scenario(const std::string& model, const std::string& system, const std::string& precision, int batch,
                         int input, int output, const std::string& parallel = "{tp: 1}") {
  return parse_scenario("schema_version: 1\nmodel: " + model + "\nsystem: " + system + "\nparallel: " + parallel +
                            "\nprecision: " + precision + "\ninference: {mode: static, batch: " + std::to_string(batch) +
                            ", input_len: " + std::to_string(input) + ", output_len: " + std::to_string(output) + "}\n",
                        "static.yaml");
}

}  // namespace

TEST_CASE("static mode: TTFT is the prefill iteration, TPOT the mean decode iteration over the growing cache") {
  const Scenario s = static_scenario("llama2-7b", "{gpu: h100-sxm-80gb, gpus: 1}", "fp8", 16, 512, 64);
  const InferencePrediction p = predict_inference(s);

  const auto net = make_collective_model(default_collective_model(), s.system, CostParameters{});
  StepCostModel steps(s, *net, CostParameters{}, InferenceCostParameters{});
  StepWork prefill;
  for (int i = 0; i < 16; ++i) prefill.prefill.add_chunk(512, 0);
  prefill.tokens = 16 * 512;
  prefill.logit_rows = 16;
  CHECK(p.ttft.mean.value() == doctest::Approx(steps.time(prefill).value()));
  // Decode steps k = 1..63 attend over 512 + k tokens each.
  double decode = 0.0;
  for (int k = 1; k < 64; ++k) {
    StepWork w;
    w.tokens = w.decode_sequences = w.logit_rows = 16;
    w.decode_context = 16.0 * (512 + k);
    decode += steps.time(w).value();
  }
  CHECK(p.tpot.mean.value() == doctest::Approx(decode / 63.0));
  CHECK(p.e2e.mean.value() == doctest::Approx(p.ttft.mean.value() + decode));
  // gptSessionBenchmark's out_tps: output_len * batch / total latency.
  CHECK(p.output_tokens_per_s == doctest::Approx(16.0 * 64.0 / p.e2e.mean.value()));
  // One batch: every percentile is the batch's value.
  CHECK(p.ttft.p99 == p.ttft.p50);
  CHECK(p.tpot.p90 == p.tpot.mean);
}

TEST_CASE("static mode memory: the batch's KV at full length, and how many such sequences fit") {
  const Scenario s = static_scenario("llama2-7b", "{gpu: h100-sxm-80gb, gpus: 1}", "bf16", 32, 1024, 1024);
  const InferencePrediction p = predict_inference(s);
  // Llama 2 7B in BF16: 512 KiB per token; 32 sequences of 2048 tokens = 32 GiB.
  CHECK(p.memory.kv_cache.value() == doctest::Approx(32.0 * 2048.0 * 524288.0));
  CHECK(p.memory.peak.value() == doctest::Approx((p.memory.weights + p.memory.kv_cache + p.memory.activations +
                                                  p.memory.buffers + p.memory.fragmentation)
                                                     .value()));
  CHECK(p.fits);
  // What is left after weights etc. holds max_concurrent_sequences sequences of 2048 tokens, and
  // not one more.
  // The H100's capacity is what CUDA reports (catalog: 85520809984 bytes).
  const double free = 85520809984.0 - (p.memory.weights + p.memory.activations + p.memory.buffers + p.memory.fragmentation).value();
  CHECK(p.max_concurrent_sequences == static_cast<int>(free / (2048.0 * 524288.0)));

  // A batch beyond that does not fit, and says so.
  const Scenario big = static_scenario("llama2-7b", "{gpu: h100-sxm-80gb, gpus: 1}", "bf16", 80, 1024, 1024);
  const InferencePrediction q = predict_inference(big);
  CHECK_FALSE(q.fits);
  CHECK(q.notes.front().find("does not fit") != std::string::npos);
}

TEST_CASE("a static batch splits over the replicas: twice the GPUs, the same per-GPU throughput") {
  const Scenario one = static_scenario("llama2-7b", "{gpu: h100-sxm-80gb, gpus: 1}", "fp8", 64, 128, 128);
  const Scenario two = static_scenario("llama2-7b", "{gpu: h100-sxm-80gb, gpus: 2}", "fp8", 128, 128, 128);
  const InferencePrediction a = predict_inference(one);
  const InferencePrediction b = predict_inference(two);
  CHECK(b.output_tokens_per_s == doctest::Approx(2.0 * a.output_tokens_per_s));
  CHECK(b.ttft.mean == a.ttft.mean);
}

TEST_CASE("Jetson AGX Orin: unified memory keeps a reserve for the OS, and INT4 beats INT8 at batch 1") {
  const std::string orin = "{gpu: jetson-agx-orin-64gb, gpus: 1, power_mode: MAXN}";
  const InferencePrediction int8 = predict_inference(static_scenario("llama2-7b", orin, "int8", 1, 128, 128));
  const InferencePrediction int4 = predict_inference(static_scenario("llama2-7b", orin, "int4", 1, 128, 128));
  CHECK(int8.fits);
  CHECK(int4.fits);
  // Decode reads every weight once per token: INT4 (0.53 bytes) is far faster than INT8 (1 byte).
  CHECK(int4.tpot.mean.value() < 0.65 * int8.tpot.mean.value());
  // Prefill of a long prompt is compute-bound: W8A8 INT8 runs at the 85 TOP/s INT8 peak, INT4
  // weight-only GEMMs at the 42.5 TFLOP/s FP16 peak with dequantization: INT8 wins there.
  const InferencePrediction int8_long = predict_inference(static_scenario("llama2-7b", orin, "int8", 1, 2048, 16));
  const InferencePrediction int4_long = predict_inference(static_scenario("llama2-7b", orin, "int4", 1, 2048, 16));
  CHECK(int8_long.ttft.mean < int4_long.ttft.mean);
  // Llama 2 70B in BF16 (138 GB) does not fit in 64 GB; in INT4 (about 37 GB) it does.
  CHECK_FALSE(predict_inference(static_scenario("llama2-70b", orin, "bf16", 1, 128, 128)).fits);
  CHECK(predict_inference(static_scenario("llama2-70b", orin, "int4", 1, 128, 128)).fits);
}

TEST_CASE("Jetson power modes slow compute-bound prefill by their compute scale, decode less") {
  const auto at = [](const std::string& mode) {
    return predict_inference(static_scenario("llama2-7b", "{gpu: jetson-agx-orin-64gb, gpus: 1, power_mode: " + mode + "}",
                                             "int4", 1, 1024, 64));
  };
  const InferencePrediction maxn = at("MAXN");
  const InferencePrediction w15 = at("15W");
  // 15 W keeps 14/171 of the GPU's peak (catalog) and the datasheet memory bandwidth: a
  // 1024-token prefill is compute-bound, so it slows by nearly 171/14 = 12.2x; batch-1 decode
  // reads the same weights at the same bandwidth, its padded GEMMs' math only partly exposed.
  const double prefill_slowdown = w15.ttft.mean / maxn.ttft.mean;
  const double decode_slowdown = w15.tpot.mean / maxn.tpot.mean;
  CHECK(prefill_slowdown > 9.0);
  CHECK(prefill_slowdown < 12.3);
  CHECK(decode_slowdown < 0.5 * prefill_slowdown);
}

}  // namespace stepcast
