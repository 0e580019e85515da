#pragma once
// What a prediction returns. These mirror the public JSON contract of `stepcast predict`
// (DESIGN.md): field names here are the JSON keys. Extend; do not rename.
//
// Time components are exposed (critical-path) seconds per optimizer step and sum to step_time:
// anything overlapped with compute is not counted again. Memory components are bytes per GPU on
// the pipeline stage with the highest peak; `per_stage` holds every stage.

#include <string>
#include <vector>

#include "model/units.h"

namespace stepcast {

struct TimeBreakdown {
  Seconds compute;          // forward + backward of the model FLOPs (no recompute)
  Seconds recompute;        // extra forward work from activation recomputation
  Seconds tp_comm_exposed;
  Seconds cp_comm_exposed;
  Seconds ep_comm_exposed;
  Seconds pp_bubble;        // pipeline idle time on the critical stage
  Seconds pp_comm_exposed;
  Seconds dp_comm_exposed;
  Seconds optimizer;        // optimizer step (and its offload traffic, if exposed)
  Seconds offload_exposed;  // host<->GPU transfers not hidden behind compute
  Seconds other;            // data loading, launch gaps, stragglers

  [[nodiscard]] Seconds total() const {
    return compute + recompute + tp_comm_exposed + cp_comm_exposed + ep_comm_exposed + pp_bubble +
           pp_comm_exposed + dp_comm_exposed + optimizer + offload_exposed + other;
  }
};

struct MemoryBreakdown {
  Bytes weights;
  Bytes gradients;
  Bytes optimizer_states;
  Bytes activations;
  Bytes kv_cache;           // inference only
  Bytes buffers;            // CUDA context, cuBLAS/NCCL workspaces, communication buffers
  Bytes fragmentation;      // allocator overhead
  Bytes peak;               // sum of the above: the high-water mark
};

// One bar of the pipeline Gantt chart: a forward or backward pass of one micro-batch of one model
// chunk on one stage.
struct TimelineEntry {
  enum class Kind { forward, backward, backward_input, backward_weight, comm } kind = Kind::forward;
  int stage = 0;
  int microbatch = 0;
  int chunk = 0;
  Seconds start;
  Seconds end;
};

// How one parallel group is laid out on the hardware, e.g. "TP: inside NVLink (8 GPUs)".
struct GroupPlacement {
  std::string group;        // "tp", "cp", "ep", "dp", "pp"
  int size = 1;
  std::string description;
};

struct TrainingPrediction {
  Seconds step_time;
  double tokens_per_s = 0.0;
  double mfu = 0.0;         // model FLOPs (no recompute) / (step_time * gpus * dense peak)
  double hfu = 0.0;         // as MFU, recompute FLOPs included
  Flops model_flops_per_step;
  Flops hardware_flops_per_step;
  TimeBreakdown time;
  MemoryBreakdown memory;                 // the peak stage
  std::vector<MemoryBreakdown> per_stage;
  int peak_stage = 0;
  bool fits = true;
  double bubble_fraction = 0.0;           // pp_bubble / step_time
  std::vector<GroupPlacement> placement;
  std::vector<TimelineEntry> timeline;    // filled only when asked (GUI, explain)
  std::vector<std::string> notes;         // assumptions and warnings worth showing the user
};

// Summary statistics of a latency distribution, in seconds.
struct LatencyStats {
  Seconds mean;
  Seconds p50;
  Seconds p90;
  Seconds p99;
};

}  // namespace stepcast
