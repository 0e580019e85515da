#pragma once
// The training rows of tests/fixtures/reference/published_runs.yaml, as the fidelity tests name
// them. The mapping itself (one rule per field, documented there) lives in
// simulator/published_runs.h, shared with `stepcast validate`.

#include <string>
#include <vector>

#include "simulator/published_runs.h"

namespace stepcast::test {

using ReferenceRun = PublishedTrainingRun;

inline std::vector<ReferenceRun> load_reference_training_runs(const std::string& path,
                                                              std::vector<std::string>* skipped) {
  return load_published_training_runs(path, skipped);
}

}  // namespace stepcast::test
