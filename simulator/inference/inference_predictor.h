#pragma once
// Inference predictions: the entry point for `stepcast predict` on an `inference:` scenario, and
// for sweeps and searches that evaluate one configuration at a time.
//
//   static   one batch of fixed lengths (TensorRT-LLM's static tables): TTFT is the batch's
//            prefill iteration; TPOT the mean decode iteration as the KV cache grows from
//            input + 1 to input + output - 1 tokens; output tokens/s = batch x output / (TTFT +
//            every decode iteration); memory with the batch's KV at full length.
//   serving  a request stream through the discrete-event simulator (simulator/serving/): TTFT,
//            TPOT and end-to-end latency distributions, throughput, goodput under the SLOs,
//            time series and a saturation verdict.
// Both price iterations with StepCostModel (simulator/inference/step_cost.h).
//
// Engines: gpus / (tp pp) model instances (the `dp` replicas), or with disaggregation
// prefill_gpus / (tp pp) prefill-only and decode_gpus / (tp pp) decode-only instances; each
// instance runs pp sub-engines (pipeline micro-batches), each with 1/pp of its KV pool and
// max_batch. A static batch splits evenly over the instances.
//
// For sweeps: a prediction is a pure function of the scenario and the options (the serving run
// is seeded), cheap enough to call per configuration; capacity_requests_per_s and the saturation
// verdict let an arrival-rate sweep find the knee of the latency-throughput curve, and
// slo_attainment / goodput rank configurations under SLOs.

#include <cstddef>

#include "model/collective.h"
#include "model/cost_parameters.h"
#include "model/inference_parameters.h"
#include "model/prediction.h"
#include "model/scenario.h"

namespace stepcast {

struct InferencePredictorOptions {
  CostParameters cost;                  // shared kernel/memory constants (a calibration profile's)
  InferenceCostParameters inference;    // inference-only constants
  const CollectiveModel* collectives = nullptr;  // null: the default model for the system
  bool time_series = true;              // fill InferencePrediction::time_series (serving)
  std::size_t max_time_series_points = 256;
};

// Predicts an inference scenario (scenario.is_training() must be false).
InferencePrediction predict_inference(const Scenario& scenario, const InferencePredictorOptions& options = {});

}  // namespace stepcast
