#include "model/ep_overlap.h"

namespace stepcast {

Seconds overlapped_phase_exposure(Seconds comm, Seconds compute, double compute_slowdown) {
  return max(comm, compute + min(comm, compute) * compute_slowdown) - compute;
}

EpOverlapExposure paired_layer_exposure(const EpOverlapLayer& l, double f) {
  // Phases in issue order: F.attn | B.combine, B.mlp | F.dispatch, F.mlp | B.dispatch,
  // B.attn | F.combine.
  EpOverlapExposure e;
  e.backward = overlapped_phase_exposure(l.backward_combine, l.forward_attention, f) +
               overlapped_phase_exposure(l.backward_dispatch, l.forward_experts, f);
  e.forward = overlapped_phase_exposure(l.forward_dispatch, l.backward_experts, f) +
              overlapped_phase_exposure(l.forward_combine, l.backward_attention, f);
  return e;
}

}  // namespace stepcast
