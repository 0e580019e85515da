#pragma once
// The harness points that measure exactly the kernels one GPU runs in a training scenario's step
// (`stepcast-harness --scenario FILE`). The op list is the predictor's own (model/layer_ops.h):
// one transformer layer forward and backward, and the embedding and output layers, for this
// rank's tensor-parallel shard and micro-batch. Ops that run the same kernel on the same shape
// share one point, which lists their names.
//
// Mapping:
//   GEMMs           the predictor's C[m x n] = A[m x k] B[k x n] with m = tokens is the same
//                   product as cuBLAS's column-major C^T: forward TN (m = out features),
//                   data gradient NN, weight gradient NT; FP8 GEMMs run TN with E5M2 gradients
//                   (Transformer Engine's recipe); batched attention GEMMs as strided batches.
//   flash kernels   fused attention at this rank's heads (bottom-right causal when CP splits
//                   the sequence).
//   norms, swiglu, gelu, bias-dropout-add, softmax: stepcast's fused kernels at the op's shape.
//   other memory-bound ops (casts, transposes, embedding, cross-entropy, backward elementwise):
//                   a copy kernel moving the op's bytes, the stand-in for its bandwidth.
// Inference scenarios are not mapped yet (InputError says so).

#include <string>
#include <vector>

#include "model/scenario.h"
#include "validation/measurement.h"

namespace stepcast {

struct ScenarioPoint {
  MeasurementInputs inputs;
  std::vector<std::string> ops;  // the predictor's op names that run this kernel
};

std::vector<ScenarioPoint> scenario_points(const Scenario& scenario);

// "input_norm, bias_dropout_add x2": the op names in first-use order with their repeat counts.
std::string describe_ops(const std::vector<std::string>& ops);

}  // namespace stepcast
