#include "simulator/prediction_interval.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "model/inference_ops.h"
#include "model/inference_shape.h"
#include "model/layer_ops.h"
#include "model/layer_shape.h"
#include "model/op_time.h"
#include "model/placement.h"

namespace stepcast {

namespace {

std::string kernel_component(const Op& op, const CalibrationProfile& profile) {
  switch (op.kind) {
    case OpKind::gemm: return "gemm." + std::string(to_string(op.dtype));
    case OpKind::flash_forward: return "attention.forward";
    case OpKind::flash_backward: return "attention.backward";
    case OpKind::reduction:
      if (profile.component("reduction") != nullptr) return "reduction";
      break;
    case OpKind::memory_bound: break;
    case OpKind::data_movement:
      if (profile.component("memory") != nullptr) return "memory";
      break;
  }
  return profile.component("elementwise") == nullptr && profile.component("memory") != nullptr ? "memory"
                                                                                                  : "elementwise";
}

void add(std::map<std::string, double>& shares, const std::string& component, double seconds) {
  if (seconds > 0.0) shares[component] += seconds;
}

}  // namespace

std::string PredictionInterval::describe(double value, const std::string& unit) const {
  std::string out;
  if (relative_half_width) {
    out = fmt::format("{:.4g} {} ± {:.1f}% at {:.0f}%", value, unit, 100.0 * *relative_half_width, 100.0 * level);
  } else if (!too_few_points.empty()) {
    out = fmt::format("{:.4g} {} (no {:.0f}% interval: too few calibration points for {})", value, unit, 100.0 * level,
                      fmt::join(too_few_points, ", "));
  } else {
    out = fmt::format("{:.4g} {} (no interval: the profile has residuals for none of its components)", value, unit);
  }
  std::vector<std::string> notes;
  notes.push_back(fmt::format("the profile covers {:.0f}% of it", 100.0 * covered_share));
  if (!not_covered.empty()) notes.push_back("not covered: " + fmt::format("{}", fmt::join(not_covered, ", ")));
  if (relative_half_width && !too_few_points.empty()) {
    notes.push_back(fmt::format("too few points for a {:.0f}% interval, so not covered: {}", 100.0 * level,
                                fmt::join(too_few_points, ", ")));
  }
  if (!extrapolated.empty()) notes.push_back("extrapolated: " + fmt::format("{}", fmt::join(extrapolated, "; ")));
  return out + " (" + fmt::format("{}", fmt::join(notes, "; ")) + ")";
}

namespace {

// Fills an interval from seconds per component (shares of their sum `total`).
void weigh(PredictionInterval& out, const CalibrationProfile& profile, const std::map<std::string, double>& seconds,
           double total) {
  double half = 0.0;
  for (const auto& [c, s] : seconds) {
    const double share = s / total;
    out.shares.emplace_back(c, share);
    const ComponentCalibration* cal = c == "other" ? nullptr : profile.component(c);
    if (cal == nullptr) {
      out.not_covered.push_back(c);
      continue;
    }
    const auto q = cal->held_out.half_width(out.level);
    if (!q) {
      out.too_few_points.push_back(fmt::format("{} ({} points)", c, cal->held_out.n));
      continue;
    }
    out.covered_share += share;
    half += share * *q;
  }
  std::sort(out.shares.begin(), out.shares.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (out.covered_share > 0.0) out.relative_half_width = half;
}

PredictionInterval step_interval(const CalibrationProfile& profile, const StepBreakdown& step, const std::string& gemm,
                                 const std::string& attention, double level) {
  PredictionInterval out;
  out.level = level;
  const double total = step.total().value();
  if (!(total > 0.0)) return out;
  std::map<std::string, double> seconds;
  add(seconds, gemm, (step.linear + step.output).value());
  add(seconds, attention, step.attention.value());
  add(seconds, "collective.all_reduce", step.tp_comm.value());
  add(seconds, "collective.send_recv", step.pp_comm.value());
  add(seconds, "other", step.overhead.value());
  weigh(out, profile, seconds, total);
  return out;
}

void note_outside(PredictionInterval& out, const CalibrationProfile& profile, const std::string& component,
                  const std::map<std::string, double>& quantities) {
  const ComponentCalibration* cal = profile.component(component);
  if (cal == nullptr) return;
  for (const auto& e : cal->coverage.outside(quantities)) {
    const std::string line = component + ": " + e;
    if (std::find(out.extrapolated.begin(), out.extrapolated.end(), line) == out.extrapolated.end()) {
      out.extrapolated.push_back(line);
    }
  }
}

// What one inference step runs beyond the profile's measured range: its weight GEMMs' m, n, k
// (m = the step's tokens) and its attention's context length and head size.
void note_step_extrapolation(PredictionInterval& out, const CalibrationProfile& profile, const InferenceShape& shape,
                             double tokens, const std::string& attention, double context) {
  if (tokens > 0.0) {
    for (const Op& op : inference_layer_ops(shape, tokens, shape.moe_layers > 0)) {
      if (op.kind != OpKind::gemm) continue;
      note_outside(out, profile, kernel_component(op, profile), {{"m", op.gemm.m}, {"n", op.gemm.n}, {"k", op.gemm.k}});
    }
  }
  if (context > 0.0) note_outside(out, profile, attention, {{"seq_kv", context}, {"head_dim", shape.head_dim}});
}

}  // namespace

InferenceIntervals inference_intervals(const CalibrationProfile& profile, const Scenario& scenario,
                                       const InferencePrediction& prediction, double level) {
  const std::string gemm = "gemm." + std::string(to_string(scenario.precision.compute));
  InferenceIntervals out;
  out.prefill = step_interval(profile, prediction.prefill_step, gemm, "attention.forward", level);
  out.decode = step_interval(profile, prediction.decode_step, gemm, "attention.decode", level);

  // The steps the breakdowns describe (model/prediction.h): static mode prefills the whole batch
  // and decodes it at its mean context; serving prefills one mean prompt and decodes max_batch
  // sequences of mean length.
  const InferenceWorkload& w = scenario.inference();
  const bool serving = w.mode == InferenceMode::serving;
  const double input = serving ? w.serving.input_len.mean : w.input_len;
  const double output = serving ? w.serving.output_len.mean : w.output_len;
  const double batch = serving ? w.serving.max_batch : w.batch;
  const InferenceShape shape =
      make_inference_shape(scenario.model, scenario.parallel, scenario.precision, InferenceCostParameters{});
  note_step_extrapolation(out.prefill, profile, shape, serving ? input : batch * input, "attention.forward", input);
  note_step_extrapolation(out.decode, profile, shape, batch, "attention.decode",
                          input > 0.0 ? input + output / 2.0 : 0.0);
  return out;
}

PredictionInterval training_interval(const CalibrationProfile& profile, const Scenario& scenario,
                                     const TrainingPrediction& prediction, const CostParameters& params,
                                     double level) {
  PredictionInterval out;
  out.level = level;
  const double step = prediction.step_time.value();
  if (!(step > 0.0) || !scenario.is_training()) return out;
  const TrainingWorkload& training = scenario.training();
  const ParallelConfig& par = scenario.parallel;
  const GpuSpec& gpu = scenario.system.gpu;
  const LayerShape shape = make_layer_shape(scenario.model, training, par, scenario.precision, gpu.architecture);

  // The layer's kernels, as the predictor runs them: forward, backward, and what recomputation re-runs.
  std::vector<OpList> lists{layer_forward_ops(shape), layer_backward_ops(shape)};
  if (par.recompute == Recompute::full) lists.push_back(layer_forward_ops(shape));
  if (par.recompute == Recompute::selective) lists.push_back(selective_recompute_forward_ops(shape, par.recompute_modules));
  std::map<std::string, double> kernel_time;
  double kernels_total = 0.0;
  std::map<std::string, std::map<std::string, double>> gemm_shapes;  // component -> extrapolation checks
  for (const auto& list : lists) {
    for (const Op& op : list) {
      const double t = op_time(op, gpu, params).value();
      const std::string c = kernel_component(op, profile);
      kernel_time[c] += t;
      kernels_total += t;
      if (const ComponentCalibration* cal = profile.component(c)) {
        std::map<std::string, double> q;
        if (op.kind == OpKind::gemm) q = {{"m", op.gemm.m}, {"n", op.gemm.n}, {"k", op.gemm.k}};
        if (op.kind == OpKind::flash_forward || op.kind == OpKind::flash_backward) {
          q = {{"seq_kv", attention_keys(shape)}, {"head_dim", shape.head_dim}};
        }
        for (const auto& e : cal->coverage.outside(q)) {
          const std::string line = c + ": " + e;
          if (std::find(out.extrapolated.begin(), out.extrapolated.end(), line) == out.extrapolated.end()) {
            out.extrapolated.push_back(line);
          }
        }
      }
    }
  }

  std::map<std::string, double> seconds;
  const TimeBreakdown& t = prediction.time;
  // The MTP modules' time is mostly a decoder block's and the head's kernels: spread like compute.
  const double compute_like = (t.compute + t.recompute + t.pp_bubble + t.mtp).value();
  for (const auto& [c, k] : kernel_time) add(seconds, c, kernels_total > 0.0 ? compute_like * k / kernels_total : 0.0);
  const std::string memory_component = kernel_component(Op{}, profile);
  add(seconds, memory_component, t.optimizer.value());
  const double tp = t.tp_comm_exposed.value();
  if (par.sequence_parallel) {
    add(seconds, "collective.all_gather", tp / 2.0);
    add(seconds, "collective.reduce_scatter", tp / 2.0);
  } else {
    add(seconds, "collective.all_reduce", tp);
  }
  const double dp = t.dp_comm_exposed.value();
  if (par.zero >= 1) {
    add(seconds, "collective.reduce_scatter", dp / 2.0);
    add(seconds, "collective.all_gather", dp / 2.0);
  } else {
    add(seconds, "collective.all_reduce", dp);
  }
  add(seconds, "collective.send_recv", (t.pp_comm_exposed + t.cp_comm_exposed).value());
  add(seconds, "collective.all_to_all", t.ep_comm_exposed.value());
  add(seconds, "other", (t.other + t.offload_exposed).value());

  // Collective extrapolation: group sizes and the TP message (b s h activations).
  if (par.tp > 1) {
    const double message = shape.tokens() * shape.hidden * shape.activation_bytes;
    const std::string c = par.sequence_parallel ? "collective.all_gather" : "collective.all_reduce";
    if (const ComponentCalibration* cal = profile.component(c)) {
      const GroupLayout g = layout_of(ParallelDim::tp, par, scenario.system);
      for (const auto& e : cal->coverage.outside(
               {{"ranks", static_cast<double>(g.size)}, {"nodes", static_cast<double>(g.nodes)}, {"bytes", message}})) {
        out.extrapolated.push_back(c + " (TP): " + e);
      }
    }
  }
  if (par.dp > 1) {
    const std::string c = par.zero >= 1 ? "collective.reduce_scatter" : "collective.all_reduce";
    if (const ComponentCalibration* cal = profile.component(c)) {
      const GroupLayout g = layout_of(ParallelDim::dp, par, scenario.system);
      for (const auto& e : cal->coverage.outside({{"ranks", static_cast<double>(g.size)}, {"nodes", static_cast<double>(g.nodes)}})) {
        out.extrapolated.push_back(c + " (DP): " + e);
      }
    }
  }

  weigh(out, profile, seconds, step);
  return out;
}

}  // namespace stepcast
