#pragma once
// What a prediction returns. These mirror the public JSON contract of `stepcast predict`
// (DESIGN.md): field names here are the JSON keys. Extend; do not rename.
//
// Time components are exposed (critical-path) seconds per optimizer step and sum to step_time:
// anything overlapped with compute is not counted again. Memory components are bytes per GPU on
// the pipeline stage with the highest peak; `per_stage` holds every stage.

#include <string>
#include <vector>

#include "model/goodput.h"
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
  // The multi-token-prediction modules (model.mtp_depth) on the last stage, all of their time: their
  // own ops, block (compute, recompute and its TP/CP/EP/DP traffic) and second head, which the
  // components above then leave out. Zero without MTP.
  Seconds mtp;
  Seconds other;            // data loading, launch gaps, stragglers

  [[nodiscard]] Seconds total() const {
    return compute + recompute + tp_comm_exposed + cp_comm_exposed + ep_comm_exposed + pp_bubble +
           pp_comm_exposed + dp_comm_exposed + optimizer + offload_exposed + mtp + other;
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
  std::vector<Seconds> per_stage_bubble;  // each stage's pipeline idle time (waits for inputs, not
                                          // for transfers in flight), from the event simulation
  std::vector<Seconds> per_stage_busy;    // each stage's time in its forward and backward passes
  std::vector<int> per_stage_layers;      // transformer layers each pipeline rank holds (all its chunks)
  int critical_stage = 0;                 // the stage whose step ends last: the one `time` describes
  std::vector<GroupPlacement> placement;
  std::vector<TimelineEntry> timeline;    // filled only when asked (GUI, explain)
  // Expected throughput per day next to the ideal, from the scenario's `training.goodput` terms
  // (model/goodput.h); goodput_fraction 1 when none is given.
  GoodputEstimate goodput;
  // Host memory per GPU that offload needs (optimizer states, master weights, parameters, and
  // the offloaded activations of one micro-batch).
  Bytes host_memory;
  // With parallel.activation_offload_layers: the activation bytes per micro-batch that leave the
  // GPU for host memory (the activations in `memory` are already without them).
  Bytes activation_offloaded;
  std::vector<std::string> notes;         // assumptions and warnings worth showing the user
};

// Summary statistics of a latency distribution, in seconds.
struct LatencyStats {
  Seconds mean;
  Seconds p50;
  Seconds p90;
  Seconds p99;
};

// Where one engine iteration's time goes (seconds; components sum to the step time).
struct StepBreakdown {
  Seconds linear;     // weight GEMMs and the memory-bound ops between them, all layers
  Seconds attention;  // prefill (flash) and decode (paged) attention cores
  Seconds tp_comm;    // tensor-parallel all-reduces, embedding reduce and logits gather
  Seconds pp_comm;    // activations sent between pipeline stages
  Seconds output;     // final norm, logits GEMM and sampling
  Seconds overhead;   // host launch not hidden by the GPU, runtime work per iteration
  [[nodiscard]] Seconds total() const { return linear + attention + tp_comm + pp_comm + output + overhead; }
};

// One sample of a serving run's state (time series, sampled at a fixed interval).
struct ServingSample {
  Seconds time;
  double queued = 0.0;        // requests waiting for admission, all instances
  double running = 0.0;       // sequences in the running batches, all instances
  double kv_occupancy = 0.0;  // used KV blocks / KV blocks, mean over instances
};

// An inference prediction (`stepcast predict` on an `inference:` scenario). Field names are the
// JSON keys of DESIGN.md's inference contract: ttft_s, tpot_s, e2e_latency_s (each mean, p50,
// p90, p99), output_tokens_per_s, requests_per_s, memory_per_gpu_bytes, max_concurrent_sequences.
// Static mode fills the latency statistics with the one batch's values (every percentile equal).
struct InferencePrediction {
  bool serving = false;              // mode: static (one batch) or serving (a request stream)
  LatencyStats ttft;                 // arrival (static: start) to the first output token
  LatencyStats tpot;                 // per request: (finish - first token) / (output tokens - 1)
  LatencyStats e2e;                  // arrival to the last output token
  double output_tokens_per_s = 0.0;  // all GPUs of the scenario together
  double requests_per_s = 0.0;
  MemoryBreakdown memory;            // per GPU: weights, kv_cache, activations, buffers, peak
  int max_concurrent_sequences = 0;  // sequences whose KV fits at once (per instance x instances)
  bool fits = true;                  // weights + activations + buffers (+ the static batch's KV) fit

  // Static mode and the step cost of both modes.
  Seconds prefill_time;              // the whole batch's prefill (static) / one mean prompt (serving)
  StepBreakdown prefill_step;        // that prefill, by component
  StepBreakdown decode_step;         // a decode step at the mean context of the static batch
                                     // (serving: at max_batch sequences of mean length)
  double decode_tokens_per_s_peak = 0.0;  // batch / decode step (static), a throughput ceiling

  // Serving mode.
  int requests = 0;                  // simulated (all finish: the simulation drains the queue)
  int dropped = 0;                   // requests whose whole sequence never fits a KV pool
  int warmup_requests = 0;           // the first requests, served but left out of the statistics
  Seconds makespan;                  // first arrival to last finish
  double arrival_rate_per_s = 0.0;   // offered load (measured from the arrivals)
  double goodput_requests_per_s = 0.0;  // requests meeting every SLO, per second
  double slo_attainment = 0.0;       // share of requests meeting every SLO (1 without SLOs)
  double capacity_requests_per_s = 0.0;  // requests/s the engines served while requests were left
                                         // waiting (0: they always kept up)
  bool saturated = false;            // arrivals outpace service: the queue grows without bound
  std::string saturation;            // the statement explaining it (empty when not saturated)
  int preemptions = 0;
  double mean_batch = 0.0;           // sequences per iteration, time-weighted
  double mean_requests_in_system = 0.0;  // time-average of requests arrived and not finished
  double mean_kv_occupancy = 0.0;    // time-weighted
  double peak_kv_occupancy = 0.0;
  double prefix_cache_hit_tokens = 0.0;  // share of prompt tokens served from the prefix cache
  std::vector<ServingSample> time_series;
  Seconds time_series_interval;

  std::vector<std::string> notes;    // assumptions and warnings worth showing the user
};

}  // namespace stepcast
