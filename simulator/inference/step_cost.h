#pragma once
// The time of one engine iteration (step) of one model instance, for any mix of prompt chunks
// and decoding sequences. Built once per scenario; the serving simulator calls time() for every
// iteration, so it is O(1): the weight part depends only on the step's token count and is
// cached per count, attention is a closed form of the step's aggregate work.
//
// The output layer (logits, sampling, their gather) is cached per sampling row count.
//
//   stage(T, work)  = layers_stage x [ linear ops(T) + 2 all-reduce(T h) + prefill attention
//                                      + decode attention ]
//                     + embedding(T) + its vocab-parallel all-reduce (first stage)
//                     + output(rows) + logits all-gather (last stage)
//   step            = pp x stage + (pp - 1) x p2p(T h)            (the micro-batch's trip
//                                                                   through the pipeline)
//                     + launch overhead + runtime overhead per iteration
// Each op is priced by model/op_time.h (roofline with shape-aware GEMM efficiency and a
// per-kernel gap); collectives by the scenario's CollectiveModel on the TP group's placement
// (small decode messages are latency-bound there). Launch: with CUDA graphs one graph launch
// per step; without, the host dispatches every kernel and the step is never faster than that
// (CostParameters::host_dispatch_s per kernel).
//
// Pipeline parallelism: the engine keeps pp micro-batches in flight, one per stage, so each
// micro-batch's iteration takes pp stage-times (balanced stages) while the pipeline as a whole
// completes pp iterations in that time. The serving simulator therefore runs pp sub-engines per
// instance, each with 1/pp of the batch and KV pool, whose iterations take step time.

#include <vector>

#include "model/collective.h"
#include "model/cost_parameters.h"
#include "model/inference_ops.h"
#include "model/inference_parameters.h"
#include "model/inference_shape.h"
#include "model/prediction.h"
#include "model/scenario.h"

namespace stepcast {

// The work of one iteration.
struct StepWork {
  double tokens = 0.0;               // new tokens through the layers: prompt chunks + one per decode
  PrefillAttentionWork prefill;      // attention work of the prompt chunks
  double decode_sequences = 0.0;
  double decode_context = 0.0;       // cached tokens the decoding sequences attend over, summed
  double logit_rows = 0.0;           // sequences that emit a token in this step
};

class StepCostModel {
 public:
  StepCostModel(const Scenario& scenario, const CollectiveModel& collectives, const CostParameters& cost,
                const InferenceCostParameters& inference);

  // Iteration time (cached weight part; for the simulator's inner loop).
  [[nodiscard]] Seconds time(const StepWork& work);
  // The same time split into components (not cached).
  [[nodiscard]] StepBreakdown breakdown(const StepWork& work) const;

  [[nodiscard]] const InferenceShape& shape() const { return m_shape; }
  // Kernels one pipeline stage launches per iteration (for the launch-overhead term).
  [[nodiscard]] int kernels_per_step(bool prefill, bool decode) const;

 private:
  [[nodiscard]] Seconds linear_stage(double tokens) const;   // layers' ops + TP comm, one stage
  [[nodiscard]] Seconds attention_stage(const StepWork& work) const;
  [[nodiscard]] Seconds output_time(double rows) const;       // output ops + logits gather
  [[nodiscard]] Seconds overhead(Seconds gpu, const StepWork& work) const;
  [[nodiscard]] Seconds op_seconds(const Op& op) const;
  [[nodiscard]] Seconds ops_seconds(const OpList& ops) const;

  InferenceShape m_shape;
  GpuSpec m_gpu;
  CostParameters m_cost;
  InferenceCostParameters m_inference;
  const CollectiveModel* m_collectives = nullptr;
  GroupLayout m_tp_group;
  GroupLayout m_pp_link;
  bool m_cuda_graphs = true;
  int m_stage_layers = 0;
  double m_stage_moe_layers = 0.0;
  int m_layer_kernels = 0;
  std::vector<double> m_linear_cache;  // seconds per token count; < 0: not computed yet
  std::vector<double> m_output_cache;  // seconds per logit row count; < 0: not computed yet
};

}  // namespace stepcast
