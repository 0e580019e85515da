#include "gui/models/latency_curve.h"

#include <algorithm>
#include <cmath>

#include "gui/models/model_runner.h"

namespace stepcast::gui {
namespace {

constexpr int kServingSteps = 10;       // rates top/10 .. top
constexpr double kAboveCapacity = 1.25; // the top rate over the measured capacity
constexpr int kMaxStaticBatch = 1024;

LatencyPoint point_of(double load, const InferencePrediction& p, bool current) {
  return LatencyPoint{load, p.output_tokens_per_s, p.requests_per_s, p.ttft.p90, p.tpot.p90, p.saturated, p.fits, current};
}

}  // namespace

LatencyCurve latency_curve(const Scenario& scenario, const ModelVariant& variant,
                           const std::function<bool()>& cancelled) {
  LatencyCurve curve;
  if (scenario.is_training()) return curve;
  const InferenceWorkload& w = scenario.inference();
  curve.serving = w.mode == InferenceMode::serving;
  ModelRunner runner(variant);
  const auto stop = [&] { return cancelled && cancelled(); };

  if (curve.serving) {
    curve.ttft_slo = w.serving.slo.ttft;
    curve.tpot_slo = w.serving.slo.tpot;
    const double own = w.serving.arrival_rate_per_s;
    const InferencePrediction base = runner.inference(scenario, false);
    double top = base.capacity_requests_per_s * kAboveCapacity;
    if (!(top > 0.0)) {
      const double mean_output = std::max(1.0, w.serving.output_len.mean);
      top = std::max(2.0 * own, base.decode_tokens_per_s_peak / mean_output);
    }
    std::vector<double> rates;
    for (int i = 1; i <= kServingSteps; ++i) {
      const double rate = top * i / kServingSteps;
      if (std::abs(rate - own) > 1e-9 * own) rates.push_back(rate);  // the scenario's own rate once
    }
    rates.push_back(own);
    std::sort(rates.begin(), rates.end());
    for (double rate : rates) {
      if (stop()) break;
      if (rate == own) {
        curve.points.push_back(point_of(rate, base, true));
        continue;
      }
      Scenario variant_scenario = scenario;
      std::get<InferenceWorkload>(variant_scenario.workload).serving.arrival_rate_per_s = rate;
      curve.points.push_back(point_of(rate, runner.inference(variant_scenario, false), false));
    }
    return curve;
  }

  const int own = w.batch;
  std::vector<int> batches;
  for (int b = 1; b <= std::min(kMaxStaticBatch, 4 * own); b *= 2) batches.push_back(b);
  if (std::find(batches.begin(), batches.end(), own) == batches.end()) batches.push_back(own);
  std::sort(batches.begin(), batches.end());
  for (int b : batches) {
    if (stop()) break;
    Scenario variant_scenario = scenario;
    std::get<InferenceWorkload>(variant_scenario.workload).batch = b;
    curve.points.push_back(point_of(b, runner.inference(variant_scenario, false), b == own));
  }
  return curve;
}

}  // namespace stepcast::gui
