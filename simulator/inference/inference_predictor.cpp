#include "simulator/inference/inference_predictor.h"

#include <algorithm>
#include <limits>
#include <cassert>
#include <cmath>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "model/placement.h"
#include "simulator/collective_models.h"
#include "simulator/inference/inference_memory.h"
#include "simulator/inference/step_cost.h"
#include "simulator/serving/request_stream.h"
#include "simulator/serving/serving_metrics.h"
#include "simulator/serving/serving_simulator.h"

namespace stepcast {
namespace {

LatencyStats constant_stats(Seconds v) { return {v, v, v, v}; }

int instance_gpus(const Scenario& s) { return std::max(s.parallel.tp, 1) * std::max(s.parallel.pp, 1); }

void add_layout_notes(const Scenario& scenario, const InferenceShape& shape, std::vector<std::string>& notes) {
  if (shape.pp > 1) {
    notes.emplace_back(fmt::format(
        "pp = {}: {} micro-batches in flight per instance, each iteration taking {} stage times (balanced "
        "stages assumed)",
        shape.pp, shape.pp, shape.pp));
  }
  if (shape.mla && shape.tp > 1) notes.emplace_back("MLA: the compressed KV latent is replicated on every TP rank");
  if (shape.moe_layers > 0) {
    notes.emplace_back(fmt::format("MoE: {} experts over ep = {} of the tp = {} ranks (expert TP {}); routed "
                                   "tokens reach them through the TP all-reduce",
                                   shape.moe.experts, shape.ep, shape.tp, shape.tp / shape.ep));
  }
  if (shape.weight_only) {
    notes.emplace_back(fmt::format("weight-only {}: weights read at {:.3g} bytes, GEMMs at the {} peak",
                                   to_string(scenario.precision.params), shape.weight_bytes,
                                   to_string(scenario.precision.compute)));
  }
  if (scenario.system.gpu.unified_memory) {
    notes.emplace_back("unified memory: the GPU shares the system's memory with the OS; a reserve is kept for it");
  }
  if (!scenario.inference().cuda_graphs) notes.emplace_back("CUDA graphs off: the host dispatches every kernel");
}

// --- Static mode ---------------------------------------------------------------------------------

InferencePrediction predict_static(const Scenario& scenario, StepCostModel& steps, const InferencePredictorOptions& o) {
  const InferenceWorkload& w = scenario.inference();
  const InferenceShape& shape = steps.shape();
  InferencePrediction p;
  p.serving = false;
  const int instances = std::max(scenario.system.gpus / instance_gpus(scenario), 1);
  const double per_instance = std::ceil(static_cast<double>(w.batch) / instances);
  // The instance's pipeline holds pp micro-batches; each is an independent batch of iterations.
  const double micro = std::ceil(per_instance / shape.pp);
  const double in = w.input_len;
  const double out = w.output_len;

  StepWork prefill;
  for (int i = 0; i < static_cast<int>(micro); ++i) prefill.prefill.add_chunk(in, 0.0);
  prefill.tokens = micro * in;
  prefill.logit_rows = micro;
  const Seconds ttft = steps.time(prefill);
  p.prefill_time = ttft;
  p.prefill_step = steps.breakdown(prefill);

  Seconds decode_total(0.0);
  StepWork decode;
  decode.decode_sequences = micro;
  decode.tokens = micro;
  decode.logit_rows = micro;
  for (int k = 1; k < w.output_len; ++k) {
    // Decode step k appends the k-th generated token: it attends over input + k tokens.
    decode.decode_context = micro * (in + k);
    decode_total += steps.time(decode);
  }
  const int decode_steps = std::max(w.output_len - 1, 0);
  const Seconds tpot = decode_steps > 0 ? decode_total / decode_steps : Seconds(0.0);
  decode.decode_context = micro * (in + std::max(out / 2.0, 1.0));
  p.decode_step = steps.breakdown(decode);
  const Seconds e2e = ttft + decode_total;
  p.ttft = constant_stats(ttft);
  p.tpot = constant_stats(tpot);
  p.e2e = constant_stats(e2e);
  p.output_tokens_per_s = static_cast<double>(w.batch) * out / e2e.value();
  p.requests_per_s = static_cast<double>(w.batch) / e2e.value();
  p.decode_tokens_per_s_peak = tpot.value() > 0.0 ? static_cast<double>(w.batch) / tpot.value() : 0.0;

  const InferenceMemory memory = static_inference_memory(shape, scenario.system.gpu, per_instance, in + out,
                                                         micro * in, micro, o.cost, o.inference);
  p.memory = memory.breakdown;
  p.fits = memory.fits;
  const double tokens_per_sequence = (in + out) * memory.kv_per_token.value();
  p.max_concurrent_sequences =
      tokens_per_sequence > 0.0 ? static_cast<int>(std::max(memory.free_for_kv.value(), 0.0) / tokens_per_sequence) * instances : 0;
  if (!p.fits) {
    p.notes.emplace_back(fmt::format("does not fit: {:.1f} GiB needed per GPU of {:.1f} GiB usable (at most {} "
                                     "sequences of {} tokens fit)",
                                     p.memory.peak.value() / units::kGibi, memory.capacity.value() / units::kGibi,
                                     p.max_concurrent_sequences, w.input_len + w.output_len));
  }
  if (instances > 1) {
    p.notes.emplace_back(fmt::format("the batch of {} splits over {} instances of {} GPUs", w.batch, instances,
                                     instance_gpus(scenario)));
  }
  return p;
}

// --- Serving mode --------------------------------------------------------------------------------

double mean_length(const LengthSpec& l) {
  if (l.dist == LengthDistribution::uniform) return (std::max(l.min, 1.0) + std::max(l.max, l.min)) / 2.0;
  return std::max(l.mean, 1.0);
}

InferencePrediction predict_serving(const Scenario& scenario, StepCostModel& steps, const CollectiveModel& net,
                                    const InferencePredictorOptions& o) {
  const ServingWorkload& w = scenario.inference().serving;
  const InferenceShape& shape = steps.shape();
  InferencePrediction p;
  p.serving = true;

  const std::vector<serving::RequestSpec> stream = serving::make_request_stream(w);
  double mean_in = 0.0;
  double mean_out = 0.0;
  int longest_prompt = 1;
  for (const auto& r : stream) {
    mean_in += r.input_len;
    mean_out += r.output_len;
    longest_prompt = std::max(longest_prompt, r.input_len);
  }
  if (!stream.empty()) {
    mean_in /= static_cast<double>(stream.size());
    mean_out /= static_cast<double>(stream.size());
  } else {
    mean_in = mean_length(w.input_len);
    mean_out = mean_length(w.output_len);
  }

  // Instances and their engines.
  const int per_instance = instance_gpus(scenario);
  int mixed = std::max(scenario.system.gpus / per_instance, 1);
  int prefill_instances = 0;
  int decode_instances = 0;
  if (w.disaggregation.enabled) {
    prefill_instances = std::max(w.disaggregation.prefill_gpus / per_instance, 1);
    decode_instances = std::max(w.disaggregation.decode_gpus / per_instance, 1);
    mixed = 0;
  }
  const int pp = shape.pp;
  const double step_tokens = w.scheduler == BatchScheduler::continuous
                                 ? (w.chunked_prefill ? w.max_batch_tokens : std::max(w.max_batch_tokens, longest_prompt))
                                 : static_cast<double>(longest_prompt) * std::ceil(static_cast<double>(w.max_batch) / pp);
  const double rows = std::ceil(static_cast<double>(w.max_batch) / pp);
  const InferenceMemory memory = serving_inference_memory(shape, scenario.system.gpu, step_tokens, rows,
                                                          w.kv_memory_fraction, o.cost, o.inference);
  p.memory = memory.breakdown;
  p.fits = memory.fits;
  const double pool_tokens = memory.kv_per_token.value() > 0.0 ? p.memory.kv_cache / memory.kv_per_token : 0.0;
  const int blocks_per_instance = static_cast<int>(pool_tokens / std::max(w.kv_block_tokens, 1));

  serving::ServingSetup setup;
  setup.cost = &steps;
  setup.prefix_hit_rate = w.prefix_cache_hit_rate;
  setup.max_time_series_points = o.max_time_series_points;
  if (w.arrivals == ArrivalProcess::closed_loop) setup.closed_loop_concurrency = std::max(w.concurrency, 1);
  serving::SchedulerConfig& sc = setup.scheduler;
  sc.policy = w.scheduler;
  sc.max_batch = static_cast<int>(rows);
  sc.max_batch_tokens = w.max_batch_tokens;
  sc.prefill = w.chunked_prefill ? serving::PrefillPacking::chunked
               : w.prefill_first ? serving::PrefillPacking::prefill_first
                                 : serving::PrefillPacking::whole;
  sc.batch_timeout_s = w.batch_timeout.value();
  sc.block_tokens = std::max(w.kv_block_tokens, 1);
  sc.reserve_whole_sequence = w.kv_admission == ServingWorkload::KvAdmission::reserve;
  sc.reserve_output_tokens = w.max_output_tokens;
  const Bandwidth host = scenario.system.gpu.host_bandwidth * o.inference.host_link_eta;
  sc.swap = w.preemption == ServingWorkload::Preemption::swap && host.value() > 0.0;
  if (sc.swap) sc.swap_seconds_per_block = (memory.kv_per_token * static_cast<double>(sc.block_tokens) / host).value();
  if (w.preemption == ServingWorkload::Preemption::swap && !sc.swap) {
    p.notes.emplace_back("preemption by swap needs the GPU's host bandwidth (unknown here): recompute used instead");
  }
  const auto add_instances = [&](int count, serving::EngineRole role) {
    for (int i = 0; i < count; ++i) {
      for (int k = 0; k < pp; ++k) setup.engines.push_back({role, blocks_per_instance / pp});
    }
  };
  add_instances(mixed, serving::EngineRole::mixed);
  add_instances(prefill_instances, serving::EngineRole::prefill_only);
  add_instances(decode_instances, serving::EngineRole::decode_only);

  if (w.disaggregation.enabled) {
    // Each GPU of the prefill instance sends its KV shard to its peer in the decode instance.
    const GroupLayout pair = layout_of(std::vector<int>{0, w.disaggregation.prefill_gpus}, scenario.system);
    const Bytes per_token = memory.kv_per_token;  // the stage's layers, on each GPU in parallel
    setup.kv_transfer_s = [&net, pair, per_token](int tokens) {
      return net.time(CollectiveOp::send_recv, per_token * static_cast<double>(tokens), pair).value();
    };
    p.notes.emplace_back(fmt::format("disaggregated: {} prefill and {} decode instances of {} GPUs; the prompt's "
                                     "KV moves between them after prefill ({})",
                                     prefill_instances, decode_instances, per_instance, describe(pair, scenario.system)));
  }

  const serving::ServingRun run = serving::simulate_serving(stream, setup);

  // The statistics cover the requests after the warm-up (ServingWorkload::warmup_requests).
  const std::size_t n = run.requests.size();
  const int default_warmup = w.arrivals == ArrivalProcess::closed_loop ? w.concurrency : 0;
  const int asked_warmup = w.warmup_requests >= 0 ? w.warmup_requests : default_warmup;
  const std::size_t warmup = asked_warmup > 0 && static_cast<std::size_t>(asked_warmup) < n ? static_cast<std::size_t>(asked_warmup) : 0;
  p.warmup_requests = static_cast<int>(warmup);

  // Latencies of the measured requests that were served.
  std::vector<double> ttft, tpot, e2e;
  ttft.reserve(n);
  e2e.reserve(n);
  tpot.reserve(n);
  int served = 0;
  int good = 0;
  const double slo_ttft = w.slo.ttft.value();
  const double slo_tpot = w.slo.tpot.value();
  const auto meets_slo = [&](const serving::RequestState& r) {
    const double per_token = r.output > 1 ? (r.finish - r.first_token) / (r.output - 1) : 0.0;
    return (slo_ttft <= 0.0 || r.first_token - r.arrival <= slo_ttft) && (slo_tpot <= 0.0 || r.output <= 1 || per_token <= slo_tpot);
  };
  for (std::size_t i = warmup; i < n; ++i) {
    const serving::RequestState& r = run.requests[i];
    if (r.dropped || r.finish < 0.0) continue;
    ++served;
    ttft.push_back(r.first_token - r.arrival);
    e2e.push_back(r.finish - r.arrival);
    if (r.output > 1) tpot.push_back((r.finish - r.first_token) / (r.output - 1));
    good += meets_slo(r) ? 1 : 0;
  }
  p.ttft = serving::latency_stats(ttft);
  p.tpot = serving::latency_stats(tpot);
  p.e2e = serving::latency_stats(e2e);
  // TPOT counts only requests of two or more output tokens (one token has no time between tokens).
  if (tpot.empty() && served > 0) {
    p.notes.emplace_back("time per output token is undefined: no measured request generated more than one token "
                         "(its figures read 0)");
  }
  const double span = run.end - run.first_arrival;
  p.requests = static_cast<int>(n);
  p.dropped = run.dropped;
  p.makespan = Seconds(span);
  // Throughput. Without warm-up: everything served over the run. With it: the completions
  // within a measurement window, per second of the window, as a benchmark client counts the
  // requests completed in its measurement windows (perf_analyzer: completions / window duration).
  // The window opens at the first measured request's arrival and closes at a later arrival, all
  // clients busy in between (after their simultaneous start, before the drain at the end). In a
  // closed loop request warmup + k arrives at the (k+1)-th completion, so closing it c x m
  // arrivals later spans m whole rounds of the c clients (c x m completions): a window cut
  // mid-round would count a partial round of completions that arrive in clusters.
  const std::size_t round = w.arrivals == ArrivalProcess::closed_loop ? static_cast<std::size_t>(std::max(w.concurrency, 1)) : 1;
  const std::size_t last = warmup > 0 ? warmup + (n - 1 - warmup) / round * round : 0;
  const double window_start = warmup > 0 ? run.requests[warmup].arrival : 0.0;
  const double window_end = warmup > 0 ? run.requests[last].arrival : 0.0;
  // Output tokens, completions and SLO-meeting completions of the served requests finishing in
  // (from, to], each per second of `seconds`.
  const auto rates_over = [&](double from, double to, double seconds) {
    double tokens = 0.0;
    int completions = 0;
    int good_completions = 0;
    for (const serving::RequestState& r : run.requests) {
      if (r.dropped || r.finish <= from || r.finish > to) continue;
      tokens += r.output;
      ++completions;
      good_completions += meets_slo(r) ? 1 : 0;
    }
    p.output_tokens_per_s = tokens / seconds;
    p.requests_per_s = completions / seconds;
    p.goodput_requests_per_s = good_completions / seconds;
  };
  if (warmup > 0 && window_end > window_start) {
    rates_over(window_start, window_end, window_end - window_start);
  } else if (span > 0.0) {
    // No warm-up, or not one whole round after it: everything served over the run (a served
    // request's finish is >= 0; unserved ones keep a negative finish).
    rates_over(-std::numeric_limits<double>::min(), std::numeric_limits<double>::infinity(), span);
  }
  p.slo_attainment = served > 0 ? static_cast<double>(good) / served : 0.0;
  const double window = run.last_arrival - run.first_arrival;
  const bool offline = run.offline;
  p.arrival_rate_per_s = window > 0.0 ? (static_cast<double>(run.requests.size()) - 1.0) / window : 0.0;
  // The saturated rate means capacity only when the engines were saturated for a good part of the
  // run (a brief burst at low load measures little).
  p.capacity_requests_per_s = offline || run.saturated_share >= serving::kMinSaturatedShare ? run.capacity_requests_per_s : 0.0;
  p.preemptions = run.preemptions;
  p.mean_batch = run.mean_batch;
  p.mean_requests_in_system = run.mean_in_system;
  p.mean_kv_occupancy = run.mean_kv_occupancy;
  p.peak_kv_occupancy = run.peak_kv_occupancy;
  p.prefix_cache_hit_tokens = run.prompt_tokens > 0.0 ? run.cached_prompt_tokens / run.prompt_tokens : 0.0;
  if (o.time_series) {
    p.time_series = run.time_series;
    p.time_series_interval = Seconds(run.time_series_interval_s);
  }

  serving::SaturationInputs si;
  si.arrival_rate = p.arrival_rate_per_s;
  si.offline = offline;
  si.first_arrival = run.first_arrival;
  si.last_arrival = run.last_arrival;
  si.queue_at_last_arrival = run.queue_at_last_arrival;
  si.capacity = p.capacity_requests_per_s;
  si.saturated_share = run.saturated_share;
  si.requests = p.requests;
  si.max_batch = w.max_batch;
  const serving::SaturationVerdict verdict = serving::assess_saturation(si, run.time_series);
  p.saturated = verdict.saturated;
  p.saturation = verdict.statement;

  // Sequences whose KV fits at once, at the stream's mean lengths (a reserving engine holds each
  // request's max_tokens).
  const int engines = static_cast<int>(setup.engines.size());
  const double per_engine =
      std::floor(blocks_per_instance / pp * sc.block_tokens / (mean_in + serving::reserved_output_tokens(sc, mean_out)));
  p.max_concurrent_sequences = static_cast<int>(std::min(per_engine, static_cast<double>(sc.max_batch))) * engines;

  // Representative iterations: one mean prompt alone, and a decode step at the mean batch.
  StepWork prefill;
  prefill.prefill.add_chunk(std::round(mean_in), 0.0);
  prefill.tokens = std::round(mean_in);
  prefill.logit_rows = 1.0;
  p.prefill_time = steps.time(prefill);
  p.prefill_step = steps.breakdown(prefill);
  StepWork decode;
  const double batch = std::max(std::round(p.mean_batch), 1.0);
  decode.decode_sequences = batch;
  decode.tokens = batch;
  decode.logit_rows = batch;
  decode.decode_context = batch * (mean_in + mean_out / 2.0);
  p.decode_step = steps.breakdown(decode);

  if (offline) {
    p.notes.emplace_back("offline run: every request arrives in one burst, so the throughput is the configuration's "
                         "capacity");
  }
  if (warmup > 0) {
    const std::string throughput =
        window_end > window_start
            ? fmt::format("throughput counts the completions between the arrivals of requests {} and {}", warmup + 1, last + 1)
            : std::string("throughput counts every request (no whole round of the clients follows the warm-up)");
    p.notes.emplace_back(fmt::format(
        "warm-up: the first {} requests{} are served but left out of the latency statistics, and {} "
        "(warmup_requests: 0 counts every request)",
        warmup, w.arrivals == ArrivalProcess::closed_loop && w.warmup_requests < 0 ? " (the clients' simultaneous start)" : "",
        throughput));
  }
  if (!p.fits) {
    p.notes.emplace_back(fmt::format("does not fit: weights, activations and buffers leave {:.2f} GiB per GPU for "
                                     "the KV cache",
                                     memory.free_for_kv.value() / units::kGibi));
  }
  if (run.dropped > 0) {
    p.notes.emplace_back(fmt::format("{} requests dropped: their input + output never fits one instance's KV pool",
                                     run.dropped));
  }
  if (w.prefix_cache_hit_rate > 0.0) {
    p.notes.emplace_back("prefix cache: hit blocks are shared and live outside the requests' own KV blocks");
  }
  if (w.arrivals == ArrivalProcess::trace) {
    p.notes.emplace_back(fmt::format("{} requests from trace '{}'", stream.size(), w.trace_file));
  }
  return p;
}

}  // namespace

InferencePrediction predict_inference(const Scenario& scenario, const InferencePredictorOptions& options) {
  assert(!scenario.is_training());
  std::unique_ptr<CollectiveModel> owned;
  const CollectiveModel* net = options.collectives;
  if (net == nullptr) {
    owned = make_collective_model(default_collective_model(), scenario.system, options.cost);
    net = owned.get();
  }
  StepCostModel steps(scenario, *net, options.cost, options.inference);
  InferencePrediction p = scenario.inference().mode == InferenceMode::serving ? predict_serving(scenario, steps, *net, options)
                                                                              : predict_static(scenario, steps, options);
  std::vector<std::string> notes;
  add_layout_notes(scenario, steps.shape(), notes);
  notes.push_back(std::string("collectives priced by the '") + std::string(net->name()) + "' model");
  p.notes.insert(p.notes.end(), notes.begin(), notes.end());
  return p;
}

}  // namespace stepcast
