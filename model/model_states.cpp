#include "model/model_states.h"

#include <algorithm>

namespace stepcast {

BytesPerParameter bytes_per_parameter(const PrecisionConfig& precision, bool fp8_transposes) {
  BytesPerParameter b;
  b.weights = bytes_per_element(precision.params);
  const bool quantized = is_quantized_training_format(precision.compute);
  if (quantized) b.weights += fp8_weight_copy_bytes(precision, fp8_transposes);
  b.gradients = bytes_per_element(precision.grads);
  const double state = bytes_per_element(precision.optimizer);
  const double master = precision.master_remainders ? kMasterRemainderBytesPerParameter : state;
  const double moment = bytes_per_element(precision.moments.value_or(precision.optimizer));
  b.optimizer_states = (precision.master_weights ? master : 0.0) + 2.0 * moment;
  return b;
}

double fp8_weight_copy_bytes(const PrecisionConfig& precision, bool fp8_transposes) {
  // The transpose only per-tensor FP8 compute can drop (layer_ops.cpp's casts apply the same flag).
  const bool transpose = precision.compute != DataType::fp8 || fp8_transposes;
  const double transpose_bytes = transpose ? kFp8TransposeBytesPerParameter : 0.0;
  if (precision.params == DataType::fp8) return transpose_bytes;  // the weights are FP8
  // MXFP8 weights are the row-wise copy; the column-wise one with its scales is the rest.
  if (precision.params == DataType::mxfp8) return bytes_per_element(DataType::mxfp8);
  switch (precision.compute) {
    case DataType::mxfp8:
      return 2.0 * bytes_per_element(DataType::mxfp8);  // row- and column-wise copies, with scales
    case DataType::nvfp4:
      return 2.0 * bytes_per_element(DataType::nvfp4);
    default:
      return 1.0 + transpose_bytes;  // FP8 copy (+ its transpose where FP8 GEMMs are TN-only)
  }
}

double adam_state_traffic_bytes(const PrecisionConfig& precision) {
  const double moment = bytes_per_element(precision.moments.value_or(precision.optimizer));
  double master = 2.0 * bytes_per_element(precision.master_weights ? precision.optimizer : precision.params);
  if (precision.master_weights && precision.master_remainders) {
    master = bytes_per_element(precision.optimizer) + kMasterRemainderBytesPerParameter;
  }
  return master + 2.0 * (2.0 * moment);
}

ModelStateBytes model_state_bytes(double parameters, const PrecisionConfig& precision, int zero, int dp,
                                  bool fp8_transposes) {
  const BytesPerParameter b = bytes_per_parameter(precision, fp8_transposes);
  const double shards = std::max(dp, 1);
  ModelStateBytes m;
  // ZeRO-3 shards the stored weights; the FP8 copies of 16-bit weights are made per gathered layer
  // then (transient: layer_costs.h prices the casts), of FP8 weights sharded with them.
  const bool quantized = is_quantized_training_format(precision.compute);
  const double copies = quantized ? fp8_weight_copy_bytes(precision, fp8_transposes) : 0.0;
  const double stored = b.weights - copies;
  m.weights = Bytes(parameters * (zero >= 3 ? (stored + (precision.params == DataType::fp8 ? copies : 0.0)) / shards
                                            : b.weights));
  m.gradients = Bytes(parameters * b.gradients / (zero >= 2 ? shards : 1.0));
  m.optimizer_states = Bytes(parameters * b.optimizer_states / (zero >= 1 ? shards : 1.0));
  return m;
}

}  // namespace stepcast
