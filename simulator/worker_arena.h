#pragma once
// The threads a sweep or search runs its workers on: an arena of `threads` workers, or one per
// core for 0. More threads than cores (the determinism tests run 32 on any machine) need TBB's
// global limit raised, for as long as the arena lives.

#include <cstddef>
#include <memory>

#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/task_arena.h>

namespace stepcast {

struct WorkerArena {
  explicit WorkerArena(int threads)
      : allow(threads > tbb::info::default_concurrency()
                  ? std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                          static_cast<std::size_t>(threads))
                  : nullptr),
        arena(threads > 0 ? threads : tbb::task_arena::automatic) {}

  std::unique_ptr<tbb::global_control> allow;  // declared first, so it outlives the arena
  tbb::task_arena arena;
};

}  // namespace stepcast
