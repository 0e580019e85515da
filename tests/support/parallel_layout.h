#pragma once
// A parallel layout of tp x pp x dp (x cp) ranks in Megatron's default order, every other field at
// its default: the shorthand the placement and collective tests build their groups from.

#include "model/parallel.h"

namespace stepcast::test {

inline ParallelConfig parallel_layout(int tp, int pp, int dp, int cp = 1) {
  ParallelConfig p;
  p.tp = tp;
  p.pp = pp;
  p.dp = dp;
  p.cp = cp;
  return p;
}

}  // namespace stepcast::test
