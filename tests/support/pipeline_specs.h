#pragma once
// Pipeline specs for the schedule tests (simulator/pipeline_schedule.h). A PipelineSpec holds
// spans: the vectors a spec is built over must outlive it. Times in arbitrary units (Seconds).

#include <span>
#include <vector>

#include "simulator/pipeline_schedule.h"

namespace stepcast::test {

// `schedule` over p stages of v model chunks each and m micro-batches, with per-virtual-stage
// forward and backward times (p v entries each, chunk * p + stage); no weight-gradient split, no
// activation accounting, free p2p, no extra warm-up.
inline PipelineSpec pipeline_spec(PipelineSchedule schedule, int p, int v, int m, std::span<const Seconds> forward,
                                  std::span<const Seconds> backward) {
  PipelineSpec s;
  s.schedule = schedule;
  s.stages = p;
  s.chunks = v;
  s.microbatches = m;
  s.forward = forward;
  s.backward = backward;
  return s;
}

// Identical stages: `stages` x `chunks` virtual stages, each taking f / chunks forward and
// b / chunks backward per micro-batch (a whole stage: f and b) and holding 1 byte per micro-batch.
struct UniformStages {
  std::vector<Seconds> forward, backward;
  std::vector<Bytes> activations;
  UniformStages(int stages, int chunks, double f, double b) {
    forward.assign(static_cast<std::size_t>(stages * chunks), Seconds(f / chunks));
    backward.assign(static_cast<std::size_t>(stages * chunks), Seconds(b / chunks));
    activations.assign(static_cast<std::size_t>(stages * chunks), Bytes(1.0));
  }
};

// pipeline_spec over `u`'s times, with its activations.
inline PipelineSpec uniform_spec(const UniformStages& u, PipelineSchedule schedule, int p, int v, int m) {
  PipelineSpec s = pipeline_spec(schedule, p, v, m, u.forward, u.backward);
  s.activations = u.activations;
  return s;
}

}  // namespace stepcast::test
