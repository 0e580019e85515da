#pragma once
// Pipeline-parallel schedules simulated per stage as events.
//
// Each stage runs its passes of every micro-batch and model chunk in the order its schedule
// prescribes (simulator/pipeline_schedule_orders.h: GPipe, 1F1B, interleaved 1F1B, ZB-H1, ZB-H2,
// DualPipe); a pass starts when the stage is free and its input has arrived: F of a virtual stage
// needs F of its upstream virtual stage, B (or B_input) needs B (or B_input) of its downstream one
// (the route's last virtual stage needs its own F), each plus one p2p transfer when the two sit on
// different stages; W needs its own B_input, on the same stage.
//
// Durations are per virtual stage (vs = chunk * stages + stage) and one micro-batch: forward F and
// the whole backward B; the zero-bubble schedules split B into B_input = B - W and W, the weight-
// gradient part (`weight_gradient`). With identical stages and free p2p:
//   GPipe, 1F1B    makespan (m + p - 1)(f + b): bubble (p - 1)(f + b)      (Narayanan et al. 2021)
//   interleaved    (m + (p-1)/v)(f + b): bubble (p - 1)(f + b)/v                  (ibid., Sec. 2.2)
//   ZB-H1          bubble about (p - 1)(f + b_in - w)      (Qi et al. 2023, Table 1, with b = b_in + w)
//   ZB-H2          bubble about (p - 1)(f + b_in - 2w), never below zero                  (ibid.)
//   DualPipe       bubble (p/2 - 1)(F&B + b - 3w)   (DeepSeek-V3 report, Table 2; F&B = f + b here)
// closed_form_makespan() and closed_form_bubble() give them; tests compare them with the simulation.
//
// The simulator owns its buffers and reuses them across runs: after the first run of a shape
// (schedule, p, v, m), a run allocates nothing and costs one sweep over the stages' passes.

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "model/parallel.h"
#include "model/prediction.h"
#include "model/units.h"
#include "simulator/pipeline_schedule_orders.h"

namespace stepcast {

struct PipelineSpec {
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  int stages = 1;        // p
  int chunks = 1;        // v: model chunks per stage (interleaving when > 1; 2 for DualPipe, see
                         // pipeline_chunks())
  int microbatches = 1;  // m, all chunks together (DualPipe sends m/2 each way)
  std::span<const Seconds> forward;   // per virtual stage (chunk * stages + stage), one micro-batch
  std::span<const Seconds> backward;  // per virtual stage: the whole backward, recomputation included
  std::span<const Seconds> weight_gradient;  // per virtual stage: the W part of `backward` that the
                                             // zero-bubble schedules run apart (may be empty: 0)
  std::span<const Bytes> activations; // per virtual stage: held from a micro-batch's F to the end of
                                      // its backward (its W when split; may be empty: no memory
                                      // accounting)
  Seconds p2p;                        // one activation or gradient transfer between stages
  // More warm-up forwards per stage (1F1B and interleaved 1F1B): 1 under Megatron-Core's combined
  // 1F1B, the EP all-to-all overlap (pipeline_schedule_orders.h one_f_one_b_warmup).
  int extra_warmup = 0;
  bool record_timeline = false;
};

struct PipelineResult {
  Seconds makespan;                      // first F start to last B end over all stages
  std::vector<Seconds> busy;             // per stage: time spent in F, B and W
  std::vector<Seconds> finish;           // per stage: end of its last B
  std::vector<Seconds> first_start;        // per stage: start of its first pass
  std::vector<Seconds> first_forward_end;  // per stage: end of its first F
  std::vector<Seconds> chunk_first_forward_start;  // per virtual stage: start of its first F
  std::vector<Seconds> chunk_first_forward_end;    // per virtual stage: end of its first F
  std::vector<Seconds> p2p_wait;         // per stage: idle time spent waiting for a transfer in
                                         // flight (the part of a wait no longer than one p2p)
  std::vector<int> peak_in_flight;       // per stage: most (micro-batch, chunk) activations held
  std::vector<Bytes> peak_activations;   // per stage: most activation bytes held at once
  std::vector<Seconds> last_backward_start;  // per virtual stage: its final pass that computes weight
  std::vector<Seconds> last_backward_end;    // gradients (a whole B, or a W): gradients complete
  std::vector<TimelineEntry> timeline;   // when asked
};

class PipelineSimulator {
 public:
  // Runs the schedule; the result stays valid until the next run.
  const PipelineResult& run(const PipelineSpec& spec);

  // Each stage's peak activation bytes, exactly as run() reports them (PipelineResult::
  // peak_activations), without simulating time: the micro-batches a stage holds depend only on
  // its order of passes. Valid until the next call or run.
  std::span<const Bytes> peak_activations(const PipelineSpec& spec);

  // A lower bound on run(spec).makespan, in O(p v) time. The simulation is a max-plus system: every
  // start and end is a max of sums of durations and transfers, so it can only shrink when each
  // duration does. With every virtual stage's forward and backward lowered to the smallest among
  // them and transfers removed, the stages are identical and GPipe/1F1B/interleaved take exactly
  // closed_form_makespan(); that is a lower bound, and so is the busiest stage's own work. Other
  // schedules use the busy-stage bound only. Tests check the bound against the simulation.
  static Seconds makespan_lower_bound(const PipelineSpec& spec);

 private:
  // One pass in a dependency-respecting (topological) order of all stages' passes. The order
  // depends only on (schedule, p, v, m), so it is found once per shape by list scheduling and
  // cached; each run then sweeps it once.
  struct Step {
    std::uint32_t self;      // index of this pass's end time
    std::uint32_t input;     // index of the end time it waits for (a zero slot when none)
    std::uint32_t also;      // a second input (DualPipe's F&B pairs), else the zero slot
    std::uint16_t stage;
    std::uint16_t duration;  // virtual stage * 4 + PassKind
    std::uint8_t transfer;   // 1 when the input comes from another stage (one p2p)
    std::uint8_t also_transfer;
  };
  struct Order {
    PipelineSchedule schedule;
    int stages, chunks, microbatches, extra_warmup;
    std::vector<Step> steps;
  };
  // What each stage holds, from its order of passes alone (no list scheduling, no times).
  struct HoldPattern {
    PipelineSchedule schedule;
    int stages, chunks, microbatches, extra_warmup;
    std::vector<int> peak_in_flight;  // per stage
    // Per stage, the Pareto-maximal numbers of micro-batches held per chunk ([stage][k][chunk]
    // flattened, k < candidates[stage]): the activation peak is the largest of their dot
    // products with the chunks' activation sizes, whatever those sizes are.
    std::vector<std::vector<int>> held_candidates;
  };
  const Order& order_for(const PipelineSpec& spec);
  const HoldPattern& hold_pattern_for(const PipelineSpec& spec);
  void build_order(const PipelineSpec& spec, Order& order);
  void build_hold_pattern(const PipelineSpec& spec, HoldPattern& pattern);
  // Fills `out` (per stage) from the pattern and the spec's activation sizes.
  static void fill_peak_activations(const HoldPattern& pattern, const PipelineSpec& spec, std::vector<Bytes>& out);

  PipelineResult m_result;
  std::vector<Order> m_orders;         // small cache of recently used shapes
  std::size_t m_next_evict = 0;
  std::unordered_map<std::uint64_t, HoldPattern> m_holds;  // by shape (a search visits thousands)
  std::vector<Bytes> m_peaks;          // peak_activations() result
  std::vector<double> m_end;           // [3 * virtual stages * m + 1]: F ends, B ends, W ends, zero
  std::vector<double> m_duration;      // [virtual stage * 4 + PassKind]
  std::vector<double> m_clock, m_wait;
};

namespace detail {
// Peak activation bytes per stage found by walking every pass of every stage's order: the
// reference that PipelineSimulator's periodic form is tested against. `spec.activations` is
// required.
std::vector<Bytes> peak_activations_by_walking(const PipelineSpec& spec);
}  // namespace detail

// Makespan of identical stages (f, b per stage for all of its chunks, one micro-batch) with free
// p2p: (m + (p - 1)/v)(f + b) for 1F1B and interleaved 1F1B, (m + p - 1)(f + b) for GPipe.
Seconds closed_form_makespan(PipelineSchedule schedule, int stages, int chunks, int microbatches, Seconds forward,
                             Seconds backward);
// Bubble over the ideal m (f + b): (p - 1)/m, or (p - 1)/(v m) interleaved.
double closed_form_bubble_fraction(PipelineSchedule schedule, int stages, int chunks, int microbatches);

// The papers' bubble (idle time of a stage over a step) for identical stages with forward f, whole
// backward b of which w computes weight gradients, free p2p and enough micro-batches:
//   GPipe, 1F1B  (p - 1)(f + b)                       Qi et al. 2023, Table 1: (p-1)(T_F+T_B+T_W)
//   ZB-H1        (p - 1)(f + b - 2w)                  ibid.: (p-1)(T_F+T_B-T_W), T_B = b - w;
//                                                     DeepSeek-V3 Table 2 "ZB1P": (PP-1)(F+B-2W)
//   ZB-H2        max(0, (p - 1)(f + b - 3w))          Qi et al. 2023, Table 1: (p-1)(T_F+T_B-2T_W)
//   DualPipe     (p/2 - 1)(f&b + b - 3w), f&b = f + b  DeepSeek-V3 report, Table 2
// (interleaving divides 1F1B's by v). The simulation is the reference; these are its checks.
Seconds closed_form_bubble(PipelineSchedule schedule, int stages, int chunks, Seconds forward, Seconds backward,
                           Seconds weight_gradient);

}  // namespace stepcast
