// Fidelity of the EP all-to-all overlap model (parallel.ep_comm_overlap: Megatron-Core's combined
// 1F1B, model/ep_overlap.h) against controlled A/B measurements: Qwen3-30B-A3B on 16 H100, EP 16,
// the same run with the overlap off and on, for the HybridEP and the all-to-all dispatcher
// (tests/fixtures/reference/moe_ep_overlap_ab.yaml, from Megatron-Bridge's MoE comm-overlap skill
// document; each row's source, window and caveats are in the file). Each row is predicted from its
// own scenario block; nothing here or in the model is fitted to these step times. One constant is
// read from the HybridEP pair's own profiles (not from its step times): the exchanges' stretch
// beside compute, CostParameters::ep_overlap_comm_slowdown = 10.83 s / 8.25 s - 1 of communication
// kernel time. The all-to-all pair is independent of it.
//
// What the test prints: each row's step time, predicted against measured, and for each pair the
// overlap gain 1 - t_on / t_off, measured against predicted.
//
// THE TOLERANCES BELOW STATE THE CURRENT GAP, NOT A TARGET. When this test was written the model
// hid about twice what the runs gained: HybridEP 27.30 s -> 18.04 s (-33.9%) against 24.71 s ->
// 20.99 s (-15.1%); all-to-all 34.68 s -> 22.22 s (-35.9%) against 41.25 s -> 31.31 s (-24.1%,
// a directional smoke with TE's fused permutation off, which the model does not price). (The
// scenarios run TE's fused cross-entropy, the development set's rule for Megatron-Bridge Qwen3 MoE
// recipes; with stepcast's default native loss the predictions are 27.83 / 18.58 s and 35.22 /
// 22.75 s, the same gains.) On the
// HybridEP pair the model's EP time without the overlap is 12.6 s against about 8.25 s of
// communication kernels in the source's rank-0 profile (9.079 ms = 0.11% of it), and with the
// overlap it left 3.3 s exposed (74% of its EP time hidden) where the profile shows 36.55% of
// the communication hidden by compute (3.96 s of 10.83 s; the communication kernels themselves
// took about 31% longer beside compute).
// Then the exchanges run (1 + 0.312) times longer beside compute (model/ep_overlap.h): HybridEP
// 27.30 s -> 20.29 s (-25.7%, the run -15.1%), all-to-all 34.68 s -> 26.29 s (-24.2%, the run
// -24.1%); the HybridEP pair still gains too much because its overlap-off row is 10.5% slow. So:
//   - each row's error (predicted / measured - 1) must stay within kBand of the error it had when
//     written (kWrittenError): a model change that moves a row must say why and update the table;
//   - each row's |error| must stay within the current gap, kGapHybridEp (HybridEP rows) and
//     kGapAllToAll (the all-to-all rows: a directional smoke, permutation unfused);
//   - each pair's predicted gain must be positive (the overlap never slows the model) and its
//     ratio to the measured gain must stay within kBandGain of the ratio when written.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"

using namespace stepcast;

namespace {

struct AbRow {
  std::string id;
  std::string pair;
  bool overlap = false;
  double measured_s = 0.0;
  double predicted_s = 0.0;
  double ep_exposed_s = 0.0;  // the prediction's exposed EP time
  [[nodiscard]] double error() const { return predicted_s / measured_s - 1.0; }
};

const std::vector<AbRow>& ab_rows() {
  static const std::vector<AbRow> result = [] {
    const YAML::Node rows = YAML::LoadFile("tests/fixtures/reference/moe_ep_overlap_ab.yaml")["rows"];
    REQUIRE(rows.IsSequence());
    TrainingPredictor predictor;
    std::vector<AbRow> out;
    std::printf("\n%-32s %9s %9s %8s %10s\n", "EP overlap A/B row", "meas_s", "pred_s", "error", "ep_exp_s");
    for (const YAML::Node& r : rows) {
      AbRow a;
      a.id = r["id"].as<std::string>();
      a.pair = r["pair"].as<std::string>();
      a.overlap = r["overlap"].as<bool>();
      a.measured_s = r["step_time_s"].as<double>();
      REQUIRE_MESSAGE(r["window"], a.id);
      REQUIRE_MESSAGE(r["source"], a.id);
      REQUIRE_MESSAGE(r["caveats"], a.id);
      const Scenario sc = parse_scenario_node(r["scenario"], "moe_ep_overlap_ab.yaml:" + a.id);
      REQUIRE(sc.parallel.ep_comm_overlap == a.overlap);
      const TrainingPrediction p = predictor.predict(sc);
      REQUIRE_MESSAGE(p.fits, a.id);
      a.predicted_s = p.step_time.value();
      a.ep_exposed_s = p.time.ep_comm_exposed.value();
      std::printf("%-32s %9.3f %9.3f %+7.1f%% %10.3f\n", a.id.c_str(), a.measured_s, a.predicted_s, 100.0 * a.error(),
                  a.ep_exposed_s);
      out.push_back(a);
    }
    return out;
  }();
  return result;
}

const AbRow& row(const std::string& id) {
  for (const AbRow& r : ab_rows()) {
    if (r.id == id) return r;
  }
  FAIL("no row " << id);
  return ab_rows().front();
}

// Error of each row when this test was written (main 604b59b: predicted / measured - 1).
const std::map<std::string, double> kWrittenError = {
    {"hybridep_overlap_off", +0.105},            // 27.300 s
    {"hybridep_overlap_on_search", -0.037},      // 20.287 s (18.040 s before the stretched exchanges)
    {"hybridep_overlap_on_validation", -0.034},  // 20.287 s
    {"alltoall_overlap_off", -0.159},            // 34.681 s
    {"alltoall_overlap_on", -0.160},             // 26.288 s (22.219 s before)
    {"alltoall_overlap_delay_wgrad", -0.157},    // 26.288 s (predicted as plain overlap)
};
constexpr double kBand = 0.03;
constexpr double kGapHybridEp = 0.15;
constexpr double kGapAllToAll = 0.30;

// Predicted over measured overlap gain when written: HybridEP 0.257 / 0.151 (validation run),
// all-to-all 0.242 / 0.241. Before the exchanges ran longer beside the compute
// (CostParameters::ep_overlap_comm_slowdown): 0.339 and 0.359, ratios 2.30 / 2.25 / 1.49 / 1.47.
const std::map<std::string, double> kWrittenGainRatio = {
    {"hybridep_overlap_on_search", 1.74},
    {"hybridep_overlap_on_validation", 1.71},
    {"alltoall_overlap_on", 1.00},
    {"alltoall_overlap_delay_wgrad", 0.99},
};
constexpr double kBandGain = 0.15;

}  // namespace

TEST_CASE("EP overlap A/B rows: each step time within the current gap of its measurement") {
  REQUIRE(ab_rows().size() == kWrittenError.size());
  for (const AbRow& r : ab_rows()) {
    INFO(r.id << ": predicted " << r.predicted_s << " s, measured " << r.measured_s << " s");
    REQUIRE(kWrittenError.count(r.id) == 1);
    CHECK(std::abs(r.error() - kWrittenError.at(r.id)) <= kBand);
    CHECK(std::abs(r.error()) <= (r.pair == "hybridep" ? kGapHybridEp : kGapAllToAll));
  }
}

TEST_CASE("EP overlap A/B rows: the predicted overlap gain against the measured one") {
  std::printf("\n%-32s %12s %12s %8s\n", "overlap gain (1 - on/off)", "measured", "predicted", "ratio");
  for (const AbRow& on : ab_rows()) {
    if (!on.overlap) continue;
    const AbRow& off = row(on.pair + "_overlap_off");
    const double measured = 1.0 - on.measured_s / off.measured_s;
    const double predicted = 1.0 - on.predicted_s / off.predicted_s;
    const double ratio = predicted / measured;
    std::printf("%-32s %+11.1f%% %+11.1f%% %8.2f\n", on.id.c_str(), 100.0 * measured, 100.0 * predicted, ratio);
    INFO(on.id << ": gain measured " << measured << ", predicted " << predicted);
    REQUIRE(measured > 0.0);
    CHECK(predicted > 0.0);
    // The overlap acts on the exposed EP time.
    CHECK(on.ep_exposed_s < off.ep_exposed_s);
    REQUIRE(kWrittenGainRatio.count(on.id) == 1);
    CHECK(std::abs(ratio - kWrittenGainRatio.at(on.id)) <= kBandGain);
  }
}
