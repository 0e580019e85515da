#pragma once
// A training report (simulator/report.h) made with a calibration profile: the same report, plus
// what the profile says about it — the model variant, the step-time interval and what it does
// not cover, and what the scenario extrapolates beyond the measured range:
//   table  a "calibration:" block after the report;
//   json   a "calibration" object: {model, profile: {name, gpu, system, created_utc},
//          interval: {level, relative_half_width (null when there is none), step_time_s: [lo, hi]
//          (null likewise), covered_share, not_covered[], too_few_points[]}, shares: {component:
//          share}, extrapolated[]};
//   csv    three more columns: model, step_time_interval_90 (relative half-width, empty when
//          none), extrapolated (";"-separated).
// Inference reports get the same, with the intervals of the time to first token (the prefill
// step) and of the time per output token (the decode step): table lines, a JSON "calibration"
// object with "ttft" and "tpot" intervals (each with its "extrapolated" list), CSV columns model,
// ttft_interval_90, tpot_interval_90, extrapolated ("prefill ..."/"decode ..." entries, ";"-separated).
// Reports made with the "datasheet" variant are the plain report, unchanged.

#include <string>

#include "model/prediction.h"
#include "model/scenario.h"
#include "simulator/calibration_profile.h"
#include "simulator/prediction_interval.h"
#include "simulator/report.h"

namespace stepcast {

std::string calibrated_training_report(const Scenario& scenario, const TrainingPrediction& prediction,
                                       ReportFormat format, const ModelVariant& variant);
std::string calibrated_inference_report(const Scenario& scenario, const InferencePrediction& prediction,
                                        ReportFormat format, const ModelVariant& variant);

}  // namespace stepcast
