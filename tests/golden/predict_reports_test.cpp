// Golden reports: `stepcast predict --format json` of every example in scenarios/examples/
// (training and inference) is pinned in tests/golden/predict/<name>.json. A change in the model moves
// these numbers on purpose: review the diff, then regenerate with
//   STEPCAST_REGENERATE_GOLDEN=1 build/bin/predict_golden_tests
// (run from the source root) and commit the new files with the change that explains them.

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "simulator/catalog.h"
#include "simulator/collective_models.h"
#include "simulator/inference/inference_predictor.h"
#include "simulator/inference_report.h"
#include "simulator/report.h"
#include "simulator/scenario_loader.h"
#include "simulator/training_predictor.h"

using namespace stepcast;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The first differing lines, "-expected" / "+actual", with their line numbers.
std::string first_differences(const std::string& expected, const std::string& actual, int limit = 8) {
  const auto a = lines_of(expected);
  const auto b = lines_of(actual);
  std::string out;
  int shown = 0;
  for (std::size_t i = 0; i < std::max(a.size(), b.size()) && shown < limit; ++i) {
    const std::string x = i < a.size() ? a[i] : "<none>";
    const std::string y = i < b.size() ? b[i] : "<none>";
    if (x == y) continue;
    out += "line " + std::to_string(i + 1) + ":\n  -" + x + "\n  +" + y + "\n";
    ++shown;
  }
  return out;
}

}  // namespace

TEST_CASE("predict reports of the example scenarios match their golden files") {
  const bool regenerate = std::getenv("STEPCAST_REGENERATE_GOLDEN") != nullptr;
  const Catalog& catalog = Catalog::builtin();
  int compared = 0;
  for (const std::string& name : catalog.scenario_names()) {
    const Scenario scenario = load_scenario(name);
    TrainingPredictor predictor;
    const auto collectives = make_collective_model(default_collective_model(), scenario.system, predictor.parameters());
    const std::string actual =
        scenario.is_training() ? training_report(scenario, predictor.predict(scenario, *collectives), ReportFormat::json)
                               : inference_report(scenario, predict_inference(scenario), ReportFormat::json);
    const std::string path = "tests/golden/predict/" + name + ".json";
    if (regenerate) {
      std::ofstream(path) << actual;
      MESSAGE("regenerated " << path);
      continue;
    }
    std::ifstream file(path);
    CAPTURE(path);
    REQUIRE_MESSAGE(file.good(), "missing golden file; regenerate with STEPCAST_REGENERATE_GOLDEN=1");
    std::stringstream expected;
    expected << file.rdbuf();
    if (expected.str() != actual) FAIL_CHECK("report differs from " << path << ":\n" << first_differences(expected.str(), actual));
    ++compared;
  }
  if (!regenerate) CHECK(compared >= 9);
}
