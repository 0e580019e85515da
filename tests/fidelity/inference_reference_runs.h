#pragma once
// The inference rows of tests/fixtures/reference/published_runs.yaml, as the fidelity tests name
// them. The mapping itself (one rule per field, documented there) lives in
// simulator/published_runs.h, shared with `stepcast validate`.

#include <string>
#include <vector>

#include "simulator/published_runs.h"

namespace stepcast::test {

using InferenceReferenceRun = PublishedInferenceRun;

inline std::vector<InferenceReferenceRun> load_inference_reference_runs(const std::string& path) {
  return load_published_inference_runs(path);
}

}  // namespace stepcast::test
