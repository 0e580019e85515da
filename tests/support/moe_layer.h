#pragma once
// One MoE layer of a catalog model for one sequence of `seq` tokens (micro-batch 1, global batch
// 1) under a parallel layout: the LayerShape that model/moe_ops.h prices, for op-builder tests.

#include "model/layer_shape.h"
#include "model/parallel.h"
#include "model/precision.h"
#include "model/transformer.h"
#include "model/workload.h"

namespace stepcast::test {

inline LayerShape one_sequence_moe_layer(const TransformerSpec& model, const ParallelConfig& parallel,
                                         const PrecisionConfig& precision = {}, int seq = 4096) {
  TrainingWorkload w;
  w.seq_len = seq;
  w.micro_batch = 1;
  w.global_batch = 1;
  return moe_layer_shape(make_layer_shape(model, w, parallel, precision));
}

}  // namespace stepcast::test
