#pragma once
// The latency-throughput curve of an inference scenario: how time to first token and time per
// output token grow as the load rises, each point a full re-prediction.
//
//   serving  the load is the arrival rate. Rates run from a tenth of the top rate to the top
//            rate in ten steps, plus the scenario's own rate; the top rate is 1.25 x the capacity
//            the scenario's own run measured (requests/s served while requests waited), or, when
//            its engines always kept up, the larger of twice its own rate and the decode ceiling
//            (peak decode tokens/s / mean output tokens). Each point simulates the scenario's
//            request count with the same seed. Latencies are p90.
//   static   the load is the batch: 1, 2, 4, ... up to 4 x the scenario's batch (at most 1024),
//            and the scenario's own batch; points whose batch does not fit are kept and marked.
// Plain C++; `cancelled` is polled between points.

#include <functional>
#include <vector>

#include "model/scenario.h"
#include "model/units.h"
#include "simulator/calibration_profile.h"

namespace stepcast::gui {

struct LatencyPoint {
  double load = 0.0;                 // arrival rate (requests/s) or batch (sequences)
  double output_tokens_per_s = 0.0;
  double requests_per_s = 0.0;
  Seconds ttft_p90;
  Seconds tpot_p90;
  bool saturated = false;            // serving: arrivals outpace service
  bool fits = true;
  bool current = false;              // the scenario's own load
};

struct LatencyCurve {
  bool serving = false;
  std::vector<LatencyPoint> points;  // by increasing load
  Seconds ttft_slo;                  // 0: none
  Seconds tpot_slo;
};

// `prediction_capacity` etc. come from the scenario's own prediction (InferencePrediction).
LatencyCurve latency_curve(const Scenario& inference_scenario, const ModelVariant& variant,
                           const std::function<bool()>& cancelled = {});

}  // namespace stepcast::gui
