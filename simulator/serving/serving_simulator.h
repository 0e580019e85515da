#pragma once
// The discrete-event serving simulation: requests arrive, a load balancer sends each to an
// engine, engines run iterations (simulator/serving/engine.h), and the clock jumps from event to
// event (an arrival, the end of an iteration, a KV transfer landing, a batching window closing).
//
// Routing: join-the-shortest-queue over the engines that take new requests (mixed or
// prefill-only), by waiting + running requests, ties to the engine after the last one chosen.
// Disaggregated serving: a request whose prefill completes on a prefill-only engine travels to a
// decode-only engine (shortest queue among them) after its KV transfer, kv_transfer_s(prompt
// tokens); its first token is emitted by the prefill engine.
// Closed loop (ServingSetup::closed_loop_concurrency): a fixed number of clients, each sending
// its next request when its previous one ends, so arrivals follow completions. The first clients
// all arrive at the start and share the first iteration; a successor arrives at the instant its
// predecessor finished but after the engine has planned the next iteration (the client answers a
// finished request), so it waits for that iteration. Requests arriving at one instant are all
// queued before any engine plans.
// Prefix caching: prefix_hit_rate of each prompt (rounded down to whole KV blocks, at least one
// token left to compute) is found cached and never prefilled.
//
// The run ends when every request has finished (or was dropped for never fitting a KV pool):
// the simulation drains the queue, so an overloaded run still completes, and the saturation
// verdict (serving_metrics.h) says whether its latencies mean anything.
//
// Cost: O(1) per event plus O(batch) per iteration; 100,000 requests simulate in well under a
// second (tests/bench/bench_serving.cpp).

#include <functional>
#include <vector>

#include "simulator/inference/step_cost.h"
#include "simulator/serving/engine.h"
#include "simulator/serving/request_stream.h"

namespace stepcast::serving {

struct EnginePlan {
  EngineRole role = EngineRole::mixed;
  int kv_blocks = 0;
};

struct ServingSetup {
  SchedulerConfig scheduler;
  std::vector<EnginePlan> engines;
  StepCostModel* cost = nullptr;                     // shared by every engine (same layout)
  double prefix_hit_rate = 0.0;
  std::function<double(int prompt_tokens)> kv_transfer_s;  // disaggregation only
  std::size_t max_time_series_points = 256;
  // > 0: closed loop. Requests 0..concurrency-1 arrive at the stream's first time; each finish
  // (or drop) releases the next request at that moment. The stream's other times are ignored.
  int closed_loop_concurrency = 0;
};

struct ServingRun {
  std::vector<RequestState> requests;
  std::vector<ServingSample> time_series;
  double time_series_interval_s = 0.0;
  double first_arrival = 0.0;
  double last_arrival = 0.0;
  double end = 0.0;                   // the last finish
  double queue_at_last_arrival = 0.0;
  double mean_in_system = 0.0;        // time-average of requests arrived and not finished
  double mean_kv_occupancy = 0.0;     // time-average over [first arrival, end]
  double peak_kv_occupancy = 0.0;
  bool offline = false;               // every request arrived in a burst (window < 1% of the run)
  double capacity_requests_per_s = 0.0;  // service rate of the engines while saturated (0: never)
  double saturated_share = 0.0;       // mean share of the arrival window engines were saturated
  double mean_batch = 0.0;            // sequences per iteration, weighted by iteration time
  int preemptions = 0;
  long long iterations = 0;
  int dropped = 0;
  double cached_prompt_tokens = 0.0;
  double prompt_tokens = 0.0;
};

ServingRun simulate_serving(const std::vector<RequestSpec>& stream, const ServingSetup& setup);

}  // namespace stepcast::serving
