#include "gui/models/components.h"

namespace stepcast::gui {

// Colours: a qualitative palette (Okabe & Ito 2008, "Color Universal Design", distinguishable
// with colour-vision deficiencies), extended with greys for the minor terms.
namespace palette {
const QColor blue(0, 114, 178);
const QColor sky(86, 180, 233);
const QColor orange(230, 159, 0);
const QColor vermillion(213, 94, 0);
const QColor green(0, 158, 115);
const QColor yellow(240, 228, 66);
const QColor purple(204, 121, 167);
const QColor black(60, 60, 60);
const QColor grey(150, 150, 150);
const QColor light_grey(200, 200, 200);
const QColor brown(140, 86, 75);
}  // namespace palette

std::vector<Component> time_components(const TimeBreakdown& t) {
  return {
      {QStringLiteral("compute"), QStringLiteral("Compute"), t.compute.value(), palette::blue},
      {QStringLiteral("recompute"), QStringLiteral("Recompute"), t.recompute.value(), palette::sky},
      {QStringLiteral("tp_comm_exposed"), QStringLiteral("TP comm (exposed)"), t.tp_comm_exposed.value(), palette::orange},
      {QStringLiteral("cp_comm_exposed"), QStringLiteral("CP comm (exposed)"), t.cp_comm_exposed.value(), palette::yellow},
      {QStringLiteral("ep_comm_exposed"), QStringLiteral("EP comm (exposed)"), t.ep_comm_exposed.value(), palette::brown},
      {QStringLiteral("pp_bubble"), QStringLiteral("Pipeline bubble"), t.pp_bubble.value(), palette::vermillion},
      {QStringLiteral("pp_comm_exposed"), QStringLiteral("PP comm (exposed)"), t.pp_comm_exposed.value(), palette::purple},
      {QStringLiteral("dp_comm_exposed"), QStringLiteral("DP comm (exposed)"), t.dp_comm_exposed.value(), palette::green},
      {QStringLiteral("optimizer"), QStringLiteral("Optimizer"), t.optimizer.value(), palette::black},
      {QStringLiteral("offload_exposed"), QStringLiteral("Offload (exposed)"), t.offload_exposed.value(), palette::grey},
      {QStringLiteral("mtp"), QStringLiteral("MTP module"), t.mtp.value(), palette::sky},
      {QStringLiteral("other"), QStringLiteral("Other"), t.other.value(), palette::light_grey},
  };
}

std::vector<Component> step_components(const StepBreakdown& s) {
  return {
      {QStringLiteral("linear"), QStringLiteral("Linear layers"), s.linear.value(), palette::blue},
      {QStringLiteral("attention"), QStringLiteral("Attention"), s.attention.value(), palette::sky},
      {QStringLiteral("tp_comm"), QStringLiteral("TP comm"), s.tp_comm.value(), palette::orange},
      {QStringLiteral("pp_comm"), QStringLiteral("PP comm"), s.pp_comm.value(), palette::purple},
      {QStringLiteral("output"), QStringLiteral("Output layer"), s.output.value(), palette::green},
      {QStringLiteral("overhead"), QStringLiteral("Launch overhead"), s.overhead.value(), palette::light_grey},
  };
}

std::vector<Component> memory_components(const MemoryBreakdown& m) {
  return {
      {QStringLiteral("weights"), QStringLiteral("Weights"), m.weights.value(), palette::blue},
      {QStringLiteral("gradients"), QStringLiteral("Gradients"), m.gradients.value(), palette::sky},
      {QStringLiteral("optimizer_states"), QStringLiteral("Optimizer states"), m.optimizer_states.value(), palette::green},
      {QStringLiteral("activations"), QStringLiteral("Activations"), m.activations.value(), palette::orange},
      {QStringLiteral("kv_cache"), QStringLiteral("KV cache"), m.kv_cache.value(), palette::purple},
      {QStringLiteral("buffers"), QStringLiteral("Buffers"), m.buffers.value(), palette::grey},
      {QStringLiteral("fragmentation"), QStringLiteral("Fragmentation"), m.fragmentation.value(), palette::light_grey},
  };
}

}  // namespace stepcast::gui
