#pragma once
// Model constants set by hand from the command line: `--constant NAME=VALUE` (repeatable) on
// predict, explain, diff, sweep, search, validate and stepcast-gui. A what-if on the model itself ("what if FP8 GEMMs ran
// at 0.7 of peak?", "what if Blackwell did not throttle?"), next to --set's what-if on the
// scenario. NAME is any named constant of the model: a CostParameters constant
// (model/cost_parameters.h, the names `stepcast explain`'s sensitivity table prints, e.g.
// gemm.eta.fp8, compute.sustained_derate.blackwell), an NcclParameters one
// (model/nccl_parameters.h), or an inference-only one (model/inference_parameters.h, the
// inference.* names). They apply after --calibration's profile, so they override it.
// Every report says which constants were set, so a what-if is never mistaken for the model.
//
// Errors (InputError): text without '=', an unknown name (with the closest known name), a value
// that is not a finite number, a negative value (every constant is a rate, fraction, time, size or
// count), the same name twice.

#include <string>
#include <string_view>
#include <vector>

#include "model/cost_parameters.h"
#include "model/inference_parameters.h"
#include "model/nccl_parameters.h"

namespace stepcast {

struct ConstantOverride {
  std::string name;
  double value = 0.0;
};

// "gemm.eta.fp8=0.7" -> {gemm.eta.fp8, 0.7}; checks the form and the number, not the name.
ConstantOverride parse_constant_override(std::string_view text);

// One constant as set: its value before (datasheet or profile) and after.
struct ConstantSet {
  std::string name;
  double previous = 0.0;
  double value = 0.0;
};

// Parses and applies each "NAME=VALUE" to `cost`, `nccl` or `inference` (whichever has the name),
// in order. Without `inference` the inference-only names are unknown (callers that never predict
// inference).
std::vector<ConstantSet> apply_constant_overrides(const std::vector<std::string>& texts, CostParameters& cost,
                                                  NcclParameters& nccl, InferenceCostParameters* inference = nullptr);

// "gemm.eta.fp8=0.7 (was 0.78), ..." for the reports; empty when nothing was set.
std::string describe_constants_set(const std::vector<ConstantSet>& set);

// ", constants set by hand: gemm.eta.fp8=0.7 (was 0.78), ...": what a model variant's name gains
// (the CLI's "cost model:" / "model:" lines, the GUI's picker); empty when nothing was set.
std::string constants_set_label(const std::vector<ConstantSet>& set);

}  // namespace stepcast
