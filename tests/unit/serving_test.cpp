// The serving simulator: its random streams, queueing laws it must obey (Little's law, M/D/1),
// determinism, monotone response to load, KV-block accounting, the batching policies and the
// saturation verdict.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>

#include "simulator/collective_models.h"
#include "simulator/diagnostics.h"
#include "simulator/inference/inference_predictor.h"
#include "simulator/inference/step_cost.h"
#include "simulator/scenario_loader.h"
#include "simulator/serving/random.h"
#include "simulator/serving/request_stream.h"
#include "simulator/serving/serving_metrics.h"
#include "simulator/serving/serving_simulator.h"

namespace stepcast {
namespace {

// Llama 3 8B on one H100 with a serving block `inference` (YAML flow-mapping body).
Scenario serving_scenario(const std::string& inference, const std::string& model = "llama3-8b", int gpus = 1,
                          const std::string& parallel = "{tp: 1}") {
  return parse_scenario("schema_version: 1\nmodel: " + model + "\nsystem: {gpu: h100-sxm-80gb, gpus: " +
                            std::to_string(gpus) + "}\nparallel: " + parallel +
                            "\nprecision: bf16\ninference: {mode: serving, " + inference + "}\n",
                        "serving.yaml");
}

InferencePredictorOptions quick() {
  InferencePredictorOptions o;
  o.max_time_series_points = 128;
  return o;
}

}  // namespace

TEST_CASE("SplitMix64 and xoshiro256** reproduce their reference outputs") {
  // splitmix64.c (Vigna) seeded with 1234567.
  serving::SplitMix64 sm(1234567);
  CHECK(sm.next() == 6457827717110365317ULL);
  CHECK(sm.next() == 3203168211198807973ULL);
  CHECK(sm.next() == 9817491932198370423ULL);
  // xoshiro256starstar.c with its state from splitmix64(42) (computed independently from the
  // published algorithms).
  serving::Random r(42);
  CHECK(r.next() == 1546998764402558742ULL);
  CHECK(r.next() == 6990951692964543102ULL);
  CHECK(r.next() == 12544586762248559009ULL);
}

TEST_CASE("a lognormal length has the mean and 99th percentile it was given") {
  ServingWorkload w;
  w.requests = 200000;
  w.arrivals = ArrivalProcess::all_at_once;
  w.input_len = {LengthDistribution::lognormal, 1000.0, 5000.0};
  w.output_len = {LengthDistribution::exponential, 200.0};
  const auto stream = serving::make_request_stream(w);
  std::vector<double> in, out;
  for (const auto& r : stream) {
    in.push_back(r.input_len);
    out.push_back(r.output_len);
  }
  const LatencyStats si = serving::latency_stats(in);  // the same summary, in tokens
  CHECK(si.mean.value() == doctest::Approx(1000.0).epsilon(0.02));
  CHECK(si.p99.value() == doctest::Approx(5000.0).epsilon(0.03));
  const LatencyStats so = serving::latency_stats(out);
  CHECK(so.mean.value() == doctest::Approx(200.0).epsilon(0.02));
  // Exponential: the median is ln 2 times the mean.
  CHECK(so.p50.value() == doctest::Approx(200.0 * std::log(2.0)).epsilon(0.03));
}

TEST_CASE("Poisson and gamma arrivals have the requested rate and burstiness") {
  ServingWorkload w;
  w.requests = 100000;
  w.arrival_rate_per_s = 50.0;
  w.input_len = {LengthDistribution::fixed, 100.0};
  w.output_len = {LengthDistribution::fixed, 10.0};
  for (const double cv : {1.0, 3.0}) {
    w.arrivals = cv == 1.0 ? ArrivalProcess::poisson : ArrivalProcess::gamma;
    w.gamma_cv = cv;
    const auto s = serving::make_request_stream(w);
    double sum = 0.0, sq = 0.0;
    for (std::size_t i = 1; i < s.size(); ++i) {
      const double gap = s[i].arrival_s - s[i - 1].arrival_s;
      sum += gap;
      sq += gap * gap;
    }
    const double n = static_cast<double>(s.size() - 1);
    const double mean = sum / n;
    const double sd = std::sqrt(sq / n - mean * mean);
    CHECK(mean == doctest::Approx(1.0 / 50.0).epsilon(0.02));
    CHECK(sd / mean == doctest::Approx(cv).epsilon(0.05));
  }
}

TEST_CASE("the same seed gives the same prediction; another seed another") {
  const std::string base =
      "arrival_rate: 20/s, requests: 400, input_len: {dist: lognormal, mean: 512, p99: 2048}, "
      "output_len: {dist: lognormal, mean: 128, p99: 512}, ";
  const InferencePrediction a = predict_inference(serving_scenario(base + "seed: 7"), quick());
  const InferencePrediction b = predict_inference(serving_scenario(base + "seed: 7"), quick());
  const InferencePrediction c = predict_inference(serving_scenario(base + "seed: 8"), quick());
  CHECK(a.ttft.p99 == b.ttft.p99);
  CHECK(a.e2e.mean == b.e2e.mean);
  CHECK(a.output_tokens_per_s == b.output_tokens_per_s);
  CHECK(a.time_series.size() == b.time_series.size());
  CHECK(a.e2e.mean != c.e2e.mean);
}

TEST_CASE("Little's law: mean requests in the system = throughput x mean time in the system") {
  const InferencePrediction p = predict_inference(
      serving_scenario("arrival_rate: 30/s, requests: 3000, input_len: {dist: lognormal, mean: 400, p99: 2000}, "
                       "output_len: {dist: exponential, mean: 150}, seed: 3"),
      quick());
  // Over a run that starts and ends empty, the time-average number in the system times the span
  // is the sum of the requests' sojourn times, so L = lambda W holds exactly.
  CHECK(p.mean_requests_in_system == doctest::Approx(p.requests_per_s * p.e2e.mean.value()).epsilon(1e-6));
  CHECK(p.mean_requests_in_system > 1.0);
}

TEST_CASE("M/D/1: one request at a time with deterministic service waits rho / (2 mu (1 - rho)) on average") {
  // Service of a lone request: its prefill and 7 decode iterations.
  const std::string lengths = "input_len: 256, output_len: 8, max_batch: 1, ";
  const InferencePrediction alone =
      predict_inference(serving_scenario(lengths + "arrivals: all-at-once, requests: 1"), quick());
  const double service = alone.e2e.mean.value();
  const double mu = 1.0 / service;
  const double rho = 0.7;
  const double lambda = rho * mu;
  const InferencePrediction p = predict_inference(
      serving_scenario(lengths + "arrival_rate: \"" + std::to_string(lambda) + "/s\", requests: 60000, seed: 11"),
      quick());
  const double expected_wait = rho / (2.0 * mu * (1.0 - rho));
  const double wait = p.ttft.mean.value() - alone.ttft.mean.value();
  CHECK(p.e2e.p50.value() >= service * 0.999);
  // 60,000 arrivals: the sample mean of the wait is within a few percent of the formula.
  CHECK(wait == doctest::Approx(expected_wait).epsilon(0.05));
  CHECK_FALSE(p.saturated);
}

TEST_CASE("latency grows and never falls as the arrival rate rises; throughput follows the load") {
  double last_ttft = 0.0, last_e2e = 0.0, last_throughput = 0.0;
  for (const double rate : {2.0, 8.0, 32.0, 128.0}) {
    const InferencePrediction p = predict_inference(
        serving_scenario("arrival_rate: \"" + std::to_string(rate) + "/s\", requests: 1500, " +
                         "input_len: {dist: lognormal, mean: 800, p99: 3000}, output_len: {dist: lognormal, mean: 200, "
                         "p99: 800}, seed: 5"),
        quick());
    CAPTURE(rate);
    CHECK(p.ttft.mean.value() >= last_ttft);
    CHECK(p.e2e.p90.value() >= last_e2e);
    CHECK(p.output_tokens_per_s >= last_throughput);
    last_ttft = p.ttft.mean.value();
    last_e2e = p.e2e.p90.value();
    last_throughput = p.output_tokens_per_s;
  }
}

TEST_CASE("an arrival rate beyond capacity is declared saturated, with the numbers") {
  const std::string lengths = "input_len: 2000, output_len: 500, requests: 3000, seed: 2, ";
  const InferencePrediction over = predict_inference(serving_scenario(lengths + "arrival_rate: 200/s"), quick());
  CHECK(over.saturated);
  CHECK(over.saturation.find("saturated") == 0);
  CHECK(over.capacity_requests_per_s > 0.0);
  CHECK(over.capacity_requests_per_s < 200.0);
  const InferencePrediction under = predict_inference(
      serving_scenario(lengths + "arrival_rate: \"" + std::to_string(0.5 * over.capacity_requests_per_s) + "/s\""),
      quick());
  CHECK_FALSE(under.saturated);
  CHECK(under.saturation.empty());
  // An offline run is a capacity measurement, not a warning.
  const InferencePrediction offline =
      predict_inference(serving_scenario(lengths + "arrivals: all-at-once"), quick());
  CHECK_FALSE(offline.saturated);
  CHECK(offline.requests_per_s == doctest::Approx(over.capacity_requests_per_s).epsilon(0.1));
}

TEST_CASE("KV blocks: a small pool preempts and still finishes everything, occupancy within the pool") {
  for (const std::string preemption : {"recompute", "swap"}) {
    CAPTURE(preemption);
    const InferencePrediction p = predict_inference(
        serving_scenario("arrivals: all-at-once, requests: 400, input_len: 1500, output_len: 1500, "
                         "kv_memory_fraction: 0.08, max_batch: 256, preemption: " + preemption),
        quick());
    CHECK(p.preemptions > 0);
    CHECK(p.dropped == 0);
    CHECK(p.peak_kv_occupancy <= 1.0);
    CHECK(p.peak_kv_occupancy > 0.9);
    CHECK(p.e2e.mean.value() > 0.0);
  }
  // A pool of ~5.3 GB holds 5.3e9 / 131072 B per token (Llama 3 8B) ~ 40k tokens: about 13
  // sequences of 3000 tokens, far fewer than max_batch.
  const InferencePrediction p = predict_inference(
      serving_scenario("arrivals: all-at-once, requests: 50, input_len: 1500, output_len: 1500, kv_memory_fraction: 0.08"),
      quick());
  CHECK(p.max_concurrent_sequences < 20);
}

TEST_CASE("kv_admission reserve: whole sequences reserved at admission, nothing preempted, no thrash") {
  // The same small pool as above: on demand, decodes outgrow the pool and preempt (recomputing
  // prompts); reserving input + output at admission (TensorRT-LLM's GUARANTEED_NO_EVICT) runs
  // fewer sequences at once but never preempts, so no prompt is prefilled twice.
  const std::string workload =
      "arrivals: all-at-once, requests: 400, input_len: 1500, output_len: 1500, kv_memory_fraction: 0.08, "
      "max_batch: 256, kv_admission: ";
  const InferencePrediction on_demand = predict_inference(serving_scenario(workload + "on_demand"), quick());
  const InferencePrediction reserve = predict_inference(serving_scenario(workload + "reserve"), quick());
  CHECK(on_demand.preemptions > 0);
  CHECK(reserve.preemptions == 0);
  CHECK(reserve.dropped == 0);
  CHECK(reserve.peak_kv_occupancy <= 1.0);
  // Every request ran: 400 x 1500 output tokens over the run.
  CHECK(reserve.output_tokens_per_s * reserve.makespan.value() == doctest::Approx(400.0 * 1500.0).epsilon(1e-6));
  // Recomputed prompts are work the reserving engine never does.
  CHECK(reserve.output_tokens_per_s > on_demand.output_tokens_per_s);
}

TEST_CASE("kv_admission reserve holds each request's max_tokens, not the answer it turns out to have") {
  // TensorRT-LLM's GUARANTEED_NO_EVICT admits a request only while the free blocks cover its
  // prompt + max_new_tokens (kvCacheManager.cpp getRemainingBlocksToCompletion). Prompts of 100
  // tokens whose answers stop after 100 but whose max_tokens is 1900 each hold
  // ceil(2000 / 16) = 125 blocks, so a pool of B blocks runs floor(B / 125) of them at once;
  // reserving only the answer (ceil(200 / 16) = 13 blocks) runs floor(B / 13), about 9.6x more.
  const std::string workload =
      "arrivals: all-at-once, requests: 600, input_len: 100, output_len: 100, kv_memory_fraction: 0.08, "
      "max_batch: 1024, kv_admission: ";
  const InferencePrediction own = predict_inference(serving_scenario(workload + "reserve"), quick());
  const InferencePrediction capped =
      predict_inference(serving_scenario(workload + "reserve, max_output_tokens: 1900"), quick());
  // Llama 3 8B in BF16 keeps 32 layers x 2 x 8 KV heads x 128 x 2 B = 131072 B per token.
  const double blocks = std::floor(capped.memory.kv_cache.value() / 131072.0 / 16.0);
  const double at_once = std::floor(blocks / 125.0);
  REQUIRE(at_once >= 5.0);
  CHECK(capped.max_concurrent_sequences == static_cast<int>(at_once));
  // Waves of at_once requests that all finish together: the batch never exceeds it, and every
  // full wave runs exactly that many.
  CHECK(capped.mean_batch <= at_once + 1e-9);
  CHECK(capped.mean_batch > 0.9 * at_once);
  CHECK(own.mean_batch > 8.0 * capped.mean_batch);
  CHECK(capped.preemptions == 0);
  CHECK(capped.dropped == 0);
  // Every answer is still its own 100 tokens: the reservation is not generated.
  CHECK(capped.output_tokens_per_s * capped.makespan.value() == doctest::Approx(600.0 * 100.0).epsilon(1e-6));
  CHECK(capped.output_tokens_per_s < own.output_tokens_per_s);

  // On demand, blocks follow what is generated: a max_tokens above every answer changes nothing.
  const InferencePrediction on_demand = predict_inference(serving_scenario(workload + "on_demand"), quick());
  const InferencePrediction on_demand_capped =
      predict_inference(serving_scenario(workload + "on_demand, max_output_tokens: 1900"), quick());
  CHECK(on_demand_capped.output_tokens_per_s == on_demand.output_tokens_per_s);
  CHECK(on_demand_capped.mean_batch == on_demand.mean_batch);
}

TEST_CASE("max_output_tokens cuts longer answers: generation stops at max_tokens") {
  const InferencePrediction p = predict_inference(
      serving_scenario("arrivals: all-at-once, requests: 50, input_len: 200, output_len: 500, max_output_tokens: 300"),
      quick());
  CHECK(p.output_tokens_per_s * p.makespan.value() == doctest::Approx(50.0 * 300.0).epsilon(1e-6));
  // A request whose prompt + max_tokens can never fit the pool is dropped under reserve, even
  // though its answer alone would fit: the engine would never admit it.
  const InferencePrediction never = predict_inference(
      serving_scenario("arrivals: all-at-once, requests: 4, input_len: 100, output_len: 100, kv_memory_fraction: 0.01, "
                       "kv_admission: reserve, max_output_tokens: 100000"),
      quick());
  CHECK(never.dropped == 4);
  const Scenario written = parse_scenario(
      write_scenario_yaml(serving_scenario("arrival_rate: 1/s, requests: 5, input_len: 10, output_len: 10, max_output_tokens: 1024")),
      "written.yaml");
  CHECK(written.inference().serving.max_output_tokens == 1024);
}

TEST_CASE("closed loop: concurrency C keeps C requests in the system, and one client waits for nothing") {
  // One client: each request arrives when the previous one finishes, so nothing ever queues and
  // the time to first token is the prefill of one prompt alone; arrivals follow completions.
  const InferencePrediction one = predict_inference(
      serving_scenario("arrivals: closed-loop, concurrency: 1, requests: 20, input_len: 2000, output_len: 100"), quick());
  CHECK(one.dropped == 0);
  CHECK(one.mean_batch == doctest::Approx(1.0));
  CHECK(one.ttft.p99.value() == doctest::Approx(one.ttft.p50.value()).epsilon(1e-9));
  CHECK(one.ttft.mean.value() == doctest::Approx(one.prefill_time.value()).epsilon(0.05));
  // Little's law with no gaps: C requests in the system the whole run.
  CHECK(one.mean_requests_in_system == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(one.requests_per_s * one.e2e.mean.value() == doctest::Approx(1.0).epsilon(1e-6));

  // Eight clients: eight in the system, batched together, so each waits longer per token but the
  // engine delivers more tokens per second.
  const InferencePrediction eight = predict_inference(
      serving_scenario("arrivals: closed-loop, concurrency: 8, requests: 80, input_len: 2000, output_len: 100"), quick());
  CHECK(eight.mean_requests_in_system == doctest::Approx(8.0).epsilon(0.02));
  CHECK(eight.output_tokens_per_s > 3.0 * one.output_tokens_per_s);
  CHECK(eight.tpot.mean.value() > one.tpot.mean.value());
  CHECK_FALSE(eight.saturated);
}

TEST_CASE("static batching returns a whole batch at once; dynamic batching waits at most its window") {
  const InferencePrediction s = predict_inference(
      serving_scenario("arrivals: all-at-once, requests: 8, scheduler: static, max_batch: 8, "
                       "input_len: 128, output_len: {dist: uniform, min: 10, max: 200}"),
      quick());
  // Every request of the one batch finishes when its longest does.
  CHECK(s.e2e.p50 == s.e2e.p99);
  // One request alone, a 50 ms window and a batch of 4 that never fills: it starts after 50 ms.
  const InferencePrediction d = predict_inference(
      serving_scenario("arrival_rate: 1/s, requests: 1, scheduler: dynamic, max_batch: 4, batch_timeout: 50 ms, "
                       "input_len: 128, output_len: 16"),
      quick());
  const InferencePrediction c = predict_inference(
      serving_scenario("arrival_rate: 1/s, requests: 1, input_len: 128, output_len: 16"), quick());
  CHECK(d.ttft.mean.value() == doctest::Approx(c.ttft.mean.value() + 0.050));
}

TEST_CASE("chunked prefill lets decodes run beside long prompts; without it they stall") {
  const std::string base = "arrival_rate: 4/s, requests: 300, input_len: {dist: lognormal, mean: 3000, p99: 12000}, "
                           "output_len: 256, max_batch_tokens: 2048, seed: 9, ";
  const InferencePrediction chunked = predict_inference(serving_scenario(base + "chunked_prefill: true"), quick());
  const InferencePrediction whole = predict_inference(serving_scenario(base + "chunked_prefill: false"), quick());
  const InferencePrediction first =
      predict_inference(serving_scenario(base + "chunked_prefill: false, prefill_first: true"), quick());
  // A whole prompt longer than the budget runs as its iteration's only prompt, and the decodes
  // beside it wait for it: the worst time per token grows. Prefill-only iterations stall them
  // for every prompt, not only the long ones.
  CHECK(whole.tpot.p99 > chunked.tpot.p99);
  CHECK(first.tpot.p99 > chunked.tpot.p99);
  CHECK(first.tpot.mean > whole.tpot.mean);
}

namespace {

// Llama 3 8B on one H100, BF16: the engine, its step costs and a closed-loop setup, for
// schedules followed iteration by iteration.
struct HandSchedule {
  Scenario scenario = serving_scenario("arrivals: closed-loop, concurrency: 2, requests: 4, input_len: 3000, output_len: 3");
  std::unique_ptr<CollectiveModel> net = make_collective_model(default_collective_model(), scenario.system, CostParameters{});
  StepCostModel steps{scenario, *net, CostParameters{}, InferenceCostParameters{}};

  serving::ServingRun run(serving::PrefillPacking packing, int max_batch_tokens, int requests = 4) {
    serving::ServingSetup setup;
    setup.cost = &steps;
    setup.scheduler.prefill = packing;
    setup.scheduler.max_batch_tokens = max_batch_tokens;
    setup.engines.push_back({serving::EngineRole::mixed, 100000});
    setup.closed_loop_concurrency = 2;
    std::vector<serving::RequestSpec> stream(static_cast<std::size_t>(requests), serving::RequestSpec{0.0, 3000, 3});
    return serving::simulate_serving(stream, setup);
  }
  // An iteration of `decodes` sequences attending over `context` tokens in all, beside whole
  // fresh prompts of `prompts` tokens each.
  double step(int decodes, double context, std::vector<int> prompts = {}) {
    StepWork w;
    w.decode_sequences = decodes;
    w.decode_context = context;
    w.tokens = decodes;
    w.logit_rows = decodes;
    for (const int p : prompts) {
      w.prefill.add_chunk(p, 0.0);
      w.tokens += p;
      w.logit_rows += 1.0;
    }
    return steps.time(w).value();
  }
};

double ttft(const serving::RequestState& r) { return r.first_token - r.arrival; }

}  // namespace

TEST_CASE("whole-prompt packing: a prompt that does not fit what is left of the budget waits for the next iteration") {
  // Two clients, prompts of 3000 tokens, 3 output tokens, budget 4096: only one prompt fits an
  // iteration. The first token is emitted at the end of the iteration that completes the prompt.
  HandSchedule h;
  const serving::ServingRun run = h.run(serving::PrefillPacking::whole, 4096);
  REQUIRE(run.requests.size() == 4);
  // it1: A's prompt alone (B's 3000 do not fit the 1096 left).
  const double it1 = h.step(0, 0.0, {3000});
  // it2: A's first decode (attending over 3000 + 1) beside B's whole prompt.
  const double it2 = h.step(1, 3001.0, {3000});
  // it3: both decode; A emits its third token and finishes, and its client sends A' -- which
  // lands after the engine has begun it4 (the client answers a finished request).
  const double it3 = h.step(2, 3002.0 + 3001.0);
  // it4: B's last decode alone; B finishes and sends B', which waits behind it5.
  const double it4 = h.step(1, 3002.0);
  // it5: A' alone. it6: A''s decode beside B''s prompt.
  const double it5 = h.step(0, 0.0, {3000});
  const double it6 = h.step(1, 3001.0, {3000});
  CHECK(ttft(run.requests[0]) == doctest::Approx(it1));
  CHECK(ttft(run.requests[1]) == doctest::Approx(it1 + it2));
  CHECK(run.requests[2].arrival == doctest::Approx(it1 + it2 + it3));
  CHECK(ttft(run.requests[2]) == doctest::Approx(it4 + it5));
  // The successors queue behind each other's prefill: B' waits for A''s whole prompt.
  CHECK(run.requests[3].arrival == doctest::Approx(it1 + it2 + it3 + it4));
  CHECK(ttft(run.requests[3]) == doctest::Approx(it5 + it6));
}

TEST_CASE("closed loop: the clients' simultaneous start is warm-up, left out of the latency statistics") {
  // The hand schedule above: two clients, 3000-token prompts, 3 output tokens, budget 4096.
  // Requests 0 and 1 arrive together at the start and queue behind each other's prompt; 2 and 3
  // arrive as clients are freed. By default a closed loop's first `concurrency` requests are
  // warm-up (ServingWorkload::warmup_requests), so the statistics are those of requests 2 and 3.
  HandSchedule h;
  const serving::ServingRun run = h.run(serving::PrefillPacking::whole, 4096);
  const std::string base = "arrivals: closed-loop, concurrency: 2, requests: 4, input_len: 3000, output_len: 3, "
                           "max_batch_tokens: 4096, chunked_prefill: false";
  const InferencePrediction steady = predict_inference(serving_scenario(base), quick());
  CHECK(steady.warmup_requests == 2);
  CHECK(steady.ttft.mean.value() == doctest::Approx((ttft(run.requests[2]) + ttft(run.requests[3])) / 2.0));
  CHECK(steady.e2e.mean.value() == doctest::Approx((run.requests[2].finish - run.requests[2].arrival +
                                                    run.requests[3].finish - run.requests[3].arrival) / 2.0));
  // warmup_requests: 0 counts every request, the start-up burst included.
  const InferencePrediction all = predict_inference(serving_scenario(base + ", warmup_requests: 0"), quick());
  CHECK(all.warmup_requests == 0);
  double sum = 0.0;
  for (const serving::RequestState& r : run.requests) sum += ttft(r);
  CHECK(all.ttft.mean.value() == doctest::Approx(sum / 4.0));
}

TEST_CASE("closed loop: with the warm-up left out, the statistics do not depend on how many requests are simulated") {
  // 16 clients with 3000-token prompts under an 8192-token budget without chunking: two prompts
  // fit an iteration, so of the 16 that start together the last two get their first token after 8.
  // Counted, that burst weighs 16/N in an N-request mean and the mean falls as N grows; left out,
  // a short and a long run report the same steady state.
  const std::string base =
      "arrivals: closed-loop, concurrency: 16, input_len: 3000, output_len: 200, chunked_prefill: false, ";
  const InferencePrediction short_run = predict_inference(serving_scenario(base + "requests: 64"), quick());
  const InferencePrediction long_run = predict_inference(serving_scenario(base + "requests: 640"), quick());
  CHECK(short_run.ttft.mean.value() == doctest::Approx(long_run.ttft.mean.value()).epsilon(0.02));
  CHECK(short_run.tpot.mean.value() == doctest::Approx(long_run.tpot.mean.value()).epsilon(0.02));
  CHECK(short_run.output_tokens_per_s == doctest::Approx(long_run.output_tokens_per_s).epsilon(0.02));
  const InferencePrediction short_all =
      predict_inference(serving_scenario(base + "requests: 64, warmup_requests: 0"), quick());
  const InferencePrediction long_all =
      predict_inference(serving_scenario(base + "requests: 640, warmup_requests: 0"), quick());
  CHECK(short_all.ttft.mean.value() > 1.1 * long_all.ttft.mean.value());
  CHECK(short_all.ttft.mean.value() > 1.1 * short_run.ttft.mean.value());
}

TEST_CASE("closed loop: throughput counts the completions of whole rounds of the clients") {
  // Two clients, eight requests: request 2 + k arrives at the (k+1)-th completion. The window
  // opens at request 2's arrival (completion 1) and closes c x floor((8 - 1 - 2) / c) = 4 arrivals
  // later, at request 6's (completion 5): completions 2..5, two rounds of both clients.
  HandSchedule h;
  const serving::ServingRun run = h.run(serving::PrefillPacking::whole, 4096, 8);
  const double open = run.requests[2].arrival;
  const double close = run.requests[6].arrival;
  int completions = 0;
  for (const serving::RequestState& r : run.requests) completions += r.finish > open && r.finish <= close ? 1 : 0;
  CHECK(completions == 4);
  const InferencePrediction p = predict_inference(
      serving_scenario("arrivals: closed-loop, concurrency: 2, requests: 8, input_len: 3000, output_len: 3, "
                       "max_batch_tokens: 4096, chunked_prefill: false"),
      quick());
  CHECK(p.requests_per_s == doctest::Approx(4.0 / (close - open)));
  CHECK(p.output_tokens_per_s == doctest::Approx(4.0 * 3.0 / (close - open)));
  // One client: every round is one request, so throughput is its output over its latency.
  const InferencePrediction one = predict_inference(
      serving_scenario("arrivals: closed-loop, concurrency: 1, requests: 20, input_len: 2000, output_len: 100"), quick());
  CHECK(one.output_tokens_per_s == doctest::Approx(100.0 / one.e2e.mean.value()).epsilon(1e-9));
}

TEST_CASE("warmup_requests must leave a request to measure, and a written scenario keeps it") {
  const auto error_of = [](const std::string& inference) {
    try {
      serving_scenario(inference);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_of("arrival_rate: 1/s, requests: 10, input_len: 10, output_len: 10, warmup_requests: 10")
            .find("warm-up would leave no request to measure") != std::string::npos);
  CHECK(error_of("arrival_rate: 1/s, requests: 10, input_len: 10, output_len: 10, warmup_requests: -1") != "");
  CHECK(error_of("arrival_rate: 1/s, requests: 10, input_len: 10, output_len: 10, warmup_requests: 9") == "");
  // Open loops count every request unless told otherwise.
  CHECK(predict_inference(serving_scenario("arrival_rate: 1/s, requests: 10, input_len: 10, output_len: 10"), quick())
            .warmup_requests == 0);
  const Scenario written = parse_scenario(
      write_scenario_yaml(serving_scenario("arrival_rate: 1/s, requests: 10, input_len: 10, output_len: 10, warmup_requests: 3")),
      "written.yaml");
  CHECK(written.inference().serving.warmup_requests == 3);
  const Scenario unset = parse_scenario(
      write_scenario_yaml(serving_scenario("arrivals: closed-loop, concurrency: 4, requests: 10, input_len: 10, output_len: 10")),
      "written.yaml");
  CHECK(unset.inference().serving.warmup_requests == -1);
}

TEST_CASE("an iteration whose decodes preempted admits no waiting request") {
  // A pool of 4 blocks of 16 tokens. A (32 prompt tokens, 2 blocks) and B (31, 2 blocks) prefill
  // together and fill it. A's first decode needs a third block: B, the last admitted, is
  // preempted (recompute: its 2 blocks freed, back to the head of the queue) and A takes one.
  // One block is free, enough for a 16-token chunk of B, but an iteration that preempted admits
  // nobody (vLLM V1), so B waits.
  HandSchedule h;
  serving::SchedulerConfig config;
  config.block_tokens = 16;
  config.max_batch_tokens = 4096;
  serving::Engine engine(serving::EngineRole::mixed, config, 4, h.steps);
  std::vector<serving::RequestState> requests(2);
  for (auto& r : requests) r.output = 20;  // each alone fits the pool (52 and 51 tokens)
  requests[0].input = requests[0].prompt = 32;
  requests[1].input = requests[1].prompt = 31;
  engine.enqueue(0);
  engine.enqueue(1);
  std::vector<int> finished, handed_off;
  REQUIRE(engine.try_start(0.0, requests, false));
  CHECK(engine.used_blocks() == 4);
  engine.complete(requests, finished, handed_off);
  REQUIRE(engine.try_start(engine.busy_until(), requests, false));
  CHECK(engine.counters().preemptions == 1);
  CHECK(engine.running() == 1);
  CHECK(engine.waiting() == 1);
  CHECK(engine.used_blocks() == 3);
}

TEST_CASE("chunked packing cuts the second prompt to the budget's remainder; prefill-first stalls the decodes") {
  HandSchedule h;
  // Chunked: it1 holds A's 3000 and the first 1096 of B, so A's first token comes later than
  // with whole prompts; it2 finishes B's 1904 beside A's decode.
  const serving::ServingRun chunked = h.run(serving::PrefillPacking::chunked, 4096);
  StepWork first;
  first.prefill.add_chunk(3000, 0.0);
  first.prefill.add_chunk(1096, 0.0);
  first.tokens = 4096;
  first.logit_rows = 1;
  const double it1 = h.steps.time(first).value();
  StepWork second;
  second.decode_sequences = 1;
  second.decode_context = 3001;
  second.prefill.add_chunk(1904, 1096);
  second.tokens = 1905;
  second.logit_rows = 2;
  const double it2 = h.steps.time(second).value();
  CHECK(ttft(chunked.requests[0]) == doctest::Approx(it1));
  CHECK(ttft(chunked.requests[1]) == doctest::Approx(it1 + it2));
  CHECK(ttft(chunked.requests[0]) > h.step(0, 0.0, {3000}));

  // Prefill-first: it2 is B's prompt alone; A's first decode waits for it.
  const serving::ServingRun stalled = h.run(serving::PrefillPacking::prefill_first, 4096);
  const double p = h.step(0, 0.0, {3000});
  CHECK(ttft(stalled.requests[0]) == doctest::Approx(p));
  CHECK(ttft(stalled.requests[1]) == doctest::Approx(2.0 * p));
  // A's other two tokens come after both prefills, in decode iterations beside B's (each
  // attending over its cache + 1).
  CHECK(stalled.requests[0].finish == doctest::Approx(2.0 * p + h.step(2, 2.0 * 3001.0) + h.step(2, 2.0 * 3002.0)));
}

TEST_CASE("prefix caching skips the cached part of each prompt") {
  const std::string base = "arrival_rate: 10/s, requests: 500, input_len: 2048, output_len: 64, seed: 4, ";
  const InferencePrediction none = predict_inference(serving_scenario(base + "prefix_cache_hit_rate: 0"), quick());
  const InferencePrediction half = predict_inference(serving_scenario(base + "prefix_cache_hit_rate: 0.5"), quick());
  CHECK(half.prefix_cache_hit_tokens == doctest::Approx(0.5));
  CHECK(half.ttft.mean < none.ttft.mean);
}

TEST_CASE("replicas share the load; disaggregated serving moves the prompt's KV to a decode instance") {
  const std::string base = "arrival_rate: 40/s, requests: 2000, input_len: {dist: lognormal, mean: 1024, p99: 4096}, "
                           "output_len: {dist: lognormal, mean: 256, p99: 1024}, seed: 6";
  const InferencePrediction one = predict_inference(serving_scenario(base), quick());
  const InferencePrediction two = predict_inference(serving_scenario(base + ", replicas: 2", "llama3-8b", 2), quick());
  CHECK(two.ttft.p90 < one.ttft.p90);
  CHECK(two.max_concurrent_sequences == 2 * one.max_concurrent_sequences);
  const InferencePrediction disaggregated = predict_inference(
      serving_scenario(base + ", disaggregation: {prefill_gpus: 1, decode_gpus: 1}", "llama3-8b", 2), quick());
  CHECK(disaggregated.requests == 2000);
  CHECK(disaggregated.dropped == 0);
  CHECK(std::any_of(disaggregated.notes.begin(), disaggregated.notes.end(),
                    [](const std::string& n) { return n.find("disaggregated") == 0; }));
}

TEST_CASE("a trace file gives the arrivals and lengths") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "stepcast_serving_test";
  std::filesystem::create_directories(dir);
  {
    std::ofstream csv(dir / "trace.jsonl");
    csv << R"({"arrival_s": 0.0, "input_len": 100, "output_len": 10})" << "\n"
        << R"({"arrival_s": 5.0, "input_len": 100, "output_len": 10})" << "\n";
  }
  const Scenario s = parse_scenario("schema_version: 1\nmodel: llama3-8b\nsystem: {gpu: h100-sxm-80gb, gpus: 1}\n"
                                    "inference: {mode: serving, trace: trace.jsonl}\n",
                                    (dir / "scenario.yaml").string());
  const InferencePrediction p = predict_inference(s, quick());
  CHECK(p.requests == 2);
  // Two lone requests, 5 s apart: the run spans 5 s plus the second one's service.
  CHECK(p.makespan.value() == doctest::Approx(5.0 + p.e2e.mean.value()).epsilon(1e-9));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the trace example replays its 40 requests") {
  const InferencePrediction p = predict_inference(load_scenario("scenarios/examples/llama3-8b-trace.yaml"), quick());
  CHECK(p.requests == 40);
  CHECK(p.dropped == 0);
}

TEST_CASE("the time series stays bounded and evenly spaced however long the run") {
  serving::TimeSeriesRecorder recorder(0.0, 1.0, 16);
  ServingSample state;
  for (int t = 1; t <= 1000; ++t) {
    state.queued = t;
    recorder.advance(t, state);
  }
  const auto& samples = recorder.samples();
  CHECK(samples.size() < 16);
  CHECK(samples.size() >= 8);
  for (std::size_t i = 1; i < samples.size(); ++i) {
    CHECK(samples[i].time.value() - samples[i - 1].time.value() == doctest::Approx(recorder.interval()));
  }
}

TEST_CASE("percentiles interpolate between order statistics") {
  std::vector<double> v = {4.0, 1.0, 3.0, 2.0, 5.0};
  const LatencyStats s = serving::latency_stats(v);
  CHECK(s.mean.value() == 3.0);
  CHECK(s.p50.value() == 3.0);
  // h = (5 - 1) 0.9 = 3.6: 4 + 0.6 (5 - 4).
  CHECK(s.p90.value() == doctest::Approx(4.6));
}

}  // namespace stepcast
