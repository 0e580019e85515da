#pragma once
// The columns a calibration profile adds to the tables of `stepcast sweep` and `stepcast search`
// (simulator/result_table.h text columns, after the result columns):
//   step_time_interval_90     the relative half-width of the step time's 90% interval
//                             (simulator/prediction_interval.h), e.g. 0.0412; empty when the
//                             profile gives none
//   calibration_extrapolated  what the layout runs beyond the profile's measured range,
//                             ";"-separated ("gemm.bf16: k = 53248 above the measured 512..16384")
// The intervals need the prediction's breakdown, which the tables' numeric rows do not keep, so
// each row's layout is predicted once more with the profile's constants: a calibrated sweep takes
// about twice as long as an uncalibrated one.

#include <string>
#include <vector>

#include "model/cost_parameters.h"
#include "model/scenario.h"
#include "simulator/calibration_profile.h"
#include "simulator/collective_factory.h"

namespace stepcast {

const std::vector<std::string>& calibrated_columns();

// The cells of calibrated_columns() for one layout.
std::vector<std::string> calibrated_cells(const CalibrationProfile& profile, const Scenario& scenario,
                                          const CostParameters& cost, const CollectiveFactory& collectives);

}  // namespace stepcast
