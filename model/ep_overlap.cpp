#include "model/ep_overlap.h"

namespace stepcast {

Seconds overlapped_phase_exposure(Seconds comm, Seconds compute, double compute_slowdown, double comm_slowdown) {
  const Seconds stretched = comm * (1.0 + comm_slowdown);
  return max(stretched, compute + min(stretched, compute) * compute_slowdown) - compute;
}

EpOverlapExposure paired_layer_exposure(const EpOverlapLayer& l, double f, double g) {
  // Phases in issue order: F.attn | B.combine, B.mlp | F.dispatch, F.mlp | B.dispatch,
  // B.attn | F.combine.
  EpOverlapExposure e;
  e.backward = overlapped_phase_exposure(l.backward_combine, l.forward_attention, f, g) +
               overlapped_phase_exposure(l.backward_dispatch, l.forward_experts, f, g);
  e.forward = overlapped_phase_exposure(l.forward_dispatch, l.backward_experts, f, g) +
              overlapped_phase_exposure(l.forward_combine, l.backward_attention, f, g);
  return e;
}

}  // namespace stepcast
