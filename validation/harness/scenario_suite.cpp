// --scenario FILE: measures the kernels one GPU runs in the scenario's training step
// (validation/scenario_points.h says which and how they map to harness points). Each record's
// name starts with the predictor's op names that run the kernel.

#include <cstdio>
#include <string>

#include "simulator/scenario_loader.h"
#include "validation/harness/suites.h"
#include "validation/scenario_points.h"

namespace stepcast::harness {

void run_scenario_suite(Session& session, const std::string& path) {
  const Scenario scenario = load_scenario(path);
  std::printf("scenario %s\n", scenario.name.c_str());
  GemmRunner gemms(session);
  for (const ScenarioPoint& point : scenario_points(scenario)) {
    if (session.out_of_time()) return;
    const std::string label = describe_ops(point.ops) + ": ";
    if (const auto* g = std::get_if<GemmInputs>(&point.inputs)) {
      gemms.measure(*g, label);
    } else if (const auto* a = std::get_if<AttentionInputs>(&point.inputs)) {
      // cuDNN's fused SDPA (what frameworks run) and stepcast's own kernel on the same shape.
      AttentionInputs cudnn = *a;
      cudnn.impl = "cudnn_sdpa";
      if (a->direction != AttentionDirection::decode) measure_attention(session, cudnn, label);
      measure_attention(session, *a, label);
    } else if (const auto* e = std::get_if<ElementwiseInputs>(&point.inputs)) {
      measure_elementwise(session, *e, label);
    } else if (const auto* m = std::get_if<MemoryInputs>(&point.inputs)) {
      measure_memory(session, *m, label);
    }
  }
}

}  // namespace stepcast::harness
