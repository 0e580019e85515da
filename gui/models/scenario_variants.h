#pragma once
// Variants of a valid scenario made in memory (a different dp for the scaling curve, a different
// layout for the sweep), checked by the scenario loader's own cross-field checks
// (simulator/scenario_checks.h), so a variant is valid exactly when the same scenario written to
// a file would load.

#include <string>

#include "model/scenario.h"

namespace stepcast::gui {

// True when `scenario` satisfies the invariants of model/scenario.h; otherwise false with the
// loader's first message in `reason` (if given).
bool is_consistent(const Scenario& scenario, std::string* reason = nullptr);

// `scenario` with dp data-parallel replicas: system.gpus = tp*pp*cp*dp, everything else kept.
Scenario with_data_parallel(const Scenario& scenario, int dp);

}  // namespace stepcast::gui
