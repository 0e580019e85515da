#pragma once
// Pipeline-parallel schedules simulated per stage as events.
//
// Each stage runs its forward (F) and backward (B) passes of every micro-batch and model chunk in
// the order its schedule prescribes; a pass starts when the stage is free and its input has
// arrived: F of virtual stage k needs F of virtual stage k-1, B of k needs B of k+1 (the last
// virtual stage's B needs its own F), each plus one p2p transfer when the two sit on different
// stages. Virtual stage k = chunk * stages + stage (Megatron's interleaved layout: chunk c of
// stage s holds layers of virtual stage c p + s).
//
// Orders (Narayanan et al. 2021, Sec. 2.2; Megatron-LM megatron/core/pipeline_parallel/schedules.py):
//   GPipe         all F, then all B.
//   1F1B          p - s - 1 warm-up F, then alternate F and B, then the remaining B.
//   interleaved   1F1B over m v virtual micro-batches in groups of p micro-batches per chunk,
//                 warm-up (p - s - 1) 2 + (v - 1) p.
// With identical stages and free p2p the makespan is (m + (p-1)/v)(f + b): a bubble of
// (p-1)/m (GPipe, 1F1B) or (p-1)/(v m) (interleaved) of the ideal m (f + b); see
// closed_form_makespan(). ZB-H1/H2 (split B into input and weight gradients) and DualPipe are
// new orders over the same events (issue 8); until then they run as 1F1B.
//
// The simulator owns its buffers and reuses them across runs: after the first run of a shape
// (p, v, m, schedule), a run allocates nothing and costs one sweep over the 2 m v p passes.

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "model/parallel.h"
#include "model/prediction.h"
#include "model/units.h"

namespace stepcast {

struct PipelineSpec {
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  int stages = 1;        // p
  int chunks = 1;        // v: model chunks per stage (interleaving when > 1)
  int microbatches = 1;  // m
  std::span<const Seconds> forward;   // per virtual stage (chunk * stages + stage), one micro-batch
  std::span<const Seconds> backward;  // per virtual stage; recomputation included
  std::span<const Bytes> activations; // per virtual stage: held from a micro-batch's F to its B
                                      // (may be empty: no memory accounting)
  Seconds p2p;                        // one activation or gradient transfer between stages
  bool record_timeline = false;
};

struct PipelineResult {
  Seconds makespan;                      // first F start to last B end over all stages
  std::vector<Seconds> busy;             // per stage: time spent in F and B
  std::vector<Seconds> finish;           // per stage: end of its last B
  std::vector<Seconds> first_forward_end;  // per stage: end of its first F
  std::vector<Seconds> p2p_wait;         // per stage: idle time spent waiting for a transfer in
                                         // flight (the part of a wait no longer than one p2p)
  std::vector<int> peak_in_flight;       // per stage: most (micro-batch, chunk) activations held
  std::vector<Bytes> peak_activations;   // per stage: most activation bytes held at once
  std::vector<Seconds> last_backward_start;  // per virtual stage: its final B (gradients complete)
  std::vector<Seconds> last_backward_end;
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
    std::uint16_t stage;
    std::uint16_t duration;  // virtual stage * 2 + (1 for backward)
    std::uint8_t transfer;   // 1 when the input comes from another stage (one p2p)
  };
  struct Order {
    PipelineSchedule schedule;
    int stages, chunks, microbatches;
    std::vector<Step> steps;
  };
  // What each stage holds, from its order of passes alone (no list scheduling, no times).
  struct HoldPattern {
    PipelineSchedule schedule;
    int stages, chunks, microbatches;
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
  std::vector<double> m_end;           // [2 * virtual stages * m + 1]: forward ends, backward ends, zero
  std::vector<double> m_duration;      // [virtual stage * 2 + backward]
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

}  // namespace stepcast
