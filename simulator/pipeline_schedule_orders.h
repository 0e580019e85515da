#pragma once
// Which passes each pipeline stage runs, in which order, and the route a micro-batch takes through
// the stages' model chunks: everything about a schedule that does not depend on times. The event
// simulation (simulator/pipeline_schedule.h) turns these orders into start and end times.
//
// Virtual stages are numbered vs = chunk * p + stage on every schedule (stage = the GPU), so
// per-virtual-stage arrays (durations, activation sizes) are laid out alike. What differs is the
// route:
//   GPipe, 1F1B, ZB-H1, ZB-H2  one chunk per stage; micro-batches go 0 -> p-1.
//   interleaved 1F1B           v chunks per stage; model position = vs: a micro-batch goes through
//                              chunk 0 of stages 0..p-1, then chunk 1 of stages 0..p-1, ...
//                              (Narayanan et al. 2021, Sec. 2.2; Megatron's interleaved layout).
//   DualPipe                   two chunks per stage holding two copies of the model: chunk 0 of
//                              stage s holds model stage s (micro-batches fed at stage 0 travel
//                              0 -> p-1), chunk 1 holds model stage p-1-s (micro-batches fed at
//                              stage p-1 travel p-1 -> 0). Each direction carries half of the m
//                              micro-batches (DeepSeek-V3 report, arXiv:2412.19437, Sec. 3.2.1,
//                              Fig. 5; deepseek-ai/DualPipe dualpipe/dualpipe.py).
//
// Passes: F (forward), B (the whole backward), and for the zero-bubble schedules the backward split
// into B_input (input gradient, which the upstream stage waits for) and W (weight gradient, which
// nothing waits for; Qi et al. 2023, "Zero Bubble Pipeline Parallelism", arXiv:2401.10241, Sec. 2).
// Orders:
//   GPipe        all F, then all B.
//   1F1B         p - s - 1 warm-up F, then F and B alternating, then the remaining B (interleaved:
//                warm-up (p - s - 1) 2 + (v - 1) p over groups of p micro-batches per chunk;
//                Megatron-LM megatron/core/pipeline_parallel/schedules.py).
//   ZB-H1        stage s runs slots x = 0, 1, ...: F_x, B_input_{x-(p-1-s)}, W_{x-(p-1)} (each when
//                its index is in 0..m-1): 1F1B's warm-up, F/B/W triples in the steady state, and
//                the W passes of the last p - 1 micro-batches moved into the cool-down, where
//                1F1B idles (Qi et al. 2023, Sec. 3.1, Fig. 3 top). At most p micro-batches wait
//                for their W on stage 0, as 1F1B holds p.
//   ZB-H2        the same with offsets 2(p-1-s) and 2(p-1): p - 1 more warm-up forwards fill the
//                start-up bubble (Sec. 3.1, Fig. 3 bottom); up to 2p - 1 micro-batches held.
//   DualPipe     the eight phases of deepseek-ai/DualPipe's DualPipe.step() for rank s (half rank
//                h = min(s, p-1-s), P = p/2, M = m/2; phase 0 is the direction that starts at
//                the nearer end):
//                  1. 2(P-h-1) F0          2. (h+1) x (F0, F1)      3. (P-h-1) x (B1_input, W, F1)
//                  4. (M-p+h+1) x (F0, B1, F1, B0)                  5. (P-h-1) x (B1, F1, B0)
//                  6. (h+1) x (B1, B0), the later half split into B_input + deferred W
//                  7. (P-h-1) x (W, B0_input)                       8. (h+1) x W
//                W passes run the deferred weight gradients first in, first out. The overlapped
//                F&B pairs of phases 4-5 start when both inputs are in and take f + b on the
//                stage: their overlap hides communication (the MoE all-to-all), not compute. On
//                the two middle ranks the first pair of phase 4 is not overlapped (as in the code).

#include <cstdint>
#include <string>
#include <vector>

#include "model/parallel.h"

namespace stepcast {

enum class PassKind : std::uint8_t { forward, backward, backward_input, backward_weight };

struct PipelinePass {
  int microbatch = 0;  // index among its chunk's micro-batches
  int chunk = 0;
  PassKind kind = PassKind::forward;
  // A forward that runs overlapped with the backward right after it (DualPipe's F&B chunks): the
  // pair starts once both inputs are in (DualPipe._forward_backward_chunk receives both, then
  // computes), and takes f + b on the stage.
  bool paired_with_next = false;
};

// Model chunks per stage the simulation uses: 2 for DualPipe (its two directions), else vpp.
int pipeline_chunks(PipelineSchedule schedule, int vpp);

// Micro-batches each chunk processes per step: m/2 for DualPipe (each direction carries half),
// else m.
int microbatches_per_chunk(PipelineSchedule schedule, int microbatches);

// Model positions along a micro-batch's route (which layers a virtual stage holds): p for
// DualPipe (both copies hold the same p model stages), else p * v.
int model_positions(PipelineSchedule schedule, int stages, int chunks);

// The model position of virtual stage vs = chunk * p + stage: vs, or for DualPipe's chunk 1,
// p - 1 - stage.
int model_position(PipelineSchedule schedule, int stages, int chunks, int vs);

// The virtual stage whose forward output feeds vs's forward (-1: vs starts the route, it reads
// the input tokens), and the one whose input gradient feeds vs's backward (-1: vs ends the route,
// it computes the loss).
int upstream_virtual_stage(PipelineSchedule schedule, int stages, int chunks, int vs);
int downstream_virtual_stage(PipelineSchedule schedule, int stages, int chunks, int vs);

// Why a schedule cannot run this shape (p stages, v chunks, m micro-batches), or "" when it can:
// interleaving needs 1F1B and m a multiple of p (Megatron-LM's rule); DualPipe needs an even
// p >= 2 and an even m >= 2p (DualPipe.step() asserts both).
std::string pipeline_shape_problem(PipelineSchedule schedule, int stages, int chunks, int microbatches);

// Forward passes stage `stage` runs before its first backward in GPipe, 1F1B and interleaved 1F1B:
// all of them (GPipe); p - s - 1, interleaved (p - s - 1) 2 + (v - 1) p (Megatron-LM
// megatron/core/pipeline_parallel/schedules.py); plus `extra` (1 under Megatron-Core's combined
// 1F1B, see combined_unpaired_passes) — never more than the stage's v m forwards.
int one_f_one_b_warmup(PipelineSchedule schedule, int stages, int chunks, int microbatches, int stage, int extra = 0);

// Forward passes of `stage` (and as many backward passes) that run with no other micro-batch's
// pass to overlap their MoE all-to-alls, out of pipeline_chunks() x microbatches_per_chunk() of
// each; the rest run as overlapped forward/backward pairs (model/ep_overlap.h).
//   1F1B, interleaved  Megatron-Core's combined 1F1B pairs each steady-state forward with the
//                      backward issued next to it and moves one extra forward into the warm-up so
//                      the two are independent on every stage (megatron/core/pipeline_parallel/
//                      schedules.py: "we schedule one extra micro-batch forward step before the
//                      1f1b stages", num_warmup_microbatches + 1 with overlap_moe_expert_parallel_
//                      comm): the warm-up + 1 forwards and as many cool-down backwards run alone.
//                      Without a pipeline (p = 1) that is the first forward and the last backward
//                      (combined_1f1b.py, combined_1f1b_schedule_for_no_pipelining).
//   ZB-H1, ZB-H2       (no combined form in Megatron) counted like 1F1B with their warm-up.
//   GPipe              every pass: no forward runs next to a backward.
//   DualPipe           the forwards not issued as F&B pairs by its order (phases 4 and 5).
int combined_unpaired_passes(PipelineSchedule schedule, int stages, int chunks, int microbatches, int stage);

// Per virtual stage (vs = chunk * p + stage): how many of its MoE layers' forward (backward)
// passes in one step run alone, their all-to-alls not overlapped, given its layers and MoE layers.
// 1F1B and interleaved 1F1B follow Megatron-Core's combined 1F1B exactly: the warm-up forwards
// (one_f_one_b_warmup with the extra one) and as many cool-down backwards run alone; steady-state
// step k pairs forward W + k with backward k of the stage's orders, layer by layer — layer i of
// the forward's chunk with layer n_b - 1 - i of the backward's, min(n_f, n_b) pairs; the forward's
// last layers and the backward's first layers beyond that run alone
// (megatron/core/models/common/model_chunk_schedule_plan.py, TransformerModelChunkSchedulePlan.run:
// overlapped_layers = min(f_num_layers, b_num_layers)). The other schedules: the stage's share
// combined_unpaired_passes() of every layer pass.
void combined_unpaired_layer_passes(PipelineSchedule schedule, int stages, int chunks, int microbatches,
                                    const std::vector<int>& layers, const std::vector<int>& moe_layers,
                                    std::vector<double>& forward, std::vector<double>& backward);

// Every stage's passes in order: stage s's at passes[begin[s]] .. passes[begin[s + 1] - 1]. `chunks`
// is pipeline_chunks(). The shape must be valid (pipeline_shape_problem() empty). `extra_warmup`
// more forwards run before the steady state on every stage of 1F1B and interleaved 1F1B (1 for
// Megatron-Core's combined 1F1B); the other schedules ignore it.
void build_stage_orders(PipelineSchedule schedule, int stages, int chunks, int microbatches,
                        std::vector<PipelinePass>& passes, std::vector<int>& begin, int extra_warmup = 0);

}  // namespace stepcast
