#include "model/model_states.h"

#include <algorithm>

namespace stepcast {

BytesPerParameter bytes_per_parameter(const PrecisionConfig& precision) {
  BytesPerParameter b;
  b.weights = bytes_per_element(precision.params);
  if (precision.compute == DataType::fp8) b.weights += 2.0;  // FP8 weight copy + its transpose
  b.gradients = bytes_per_element(precision.grads);
  const double state = bytes_per_element(precision.optimizer);
  b.optimizer_states = (precision.master_weights ? state : 0.0) + 2.0 * state;
  return b;
}

ModelStateBytes model_state_bytes(double parameters, const PrecisionConfig& precision, int zero, int dp) {
  const BytesPerParameter b = bytes_per_parameter(precision);
  const double shards = std::max(dp, 1);
  ModelStateBytes m;
  m.weights = Bytes(parameters * b.weights / (zero >= 3 ? shards : 1.0));
  m.gradients = Bytes(parameters * b.gradients / (zero >= 2 ? shards : 1.0));
  m.optimizer_states = Bytes(parameters * b.optimizer_states / (zero >= 1 ? shards : 1.0));
  return m;
}

}  // namespace stepcast
