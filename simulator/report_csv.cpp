#include <algorithm>

#include <fmt/format.h>

#include "simulator/report.h"

namespace stepcast {

std::string csv_number(double v) { return fmt::format("{}", round_significant(v, 6)); }
std::string csv_bytes(Bytes b) { return fmt::format("{:.0f}", std::max(b.value(), 0.0)); }
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string with_csv_columns(const std::string& report, const std::string& header, const std::string& row) {
  const auto newline = report.find('\n');
  std::string first_row = report.substr(newline + 1);
  while (!first_row.empty() && first_row.back() == '\n') first_row.pop_back();
  return report.substr(0, newline) + header + "\n" + first_row + row + "\n";
}

std::string training_csv_header() {
  return "scenario,gpus,tp,pp,dp,cp,vpp,micro_batch,global_batch,step_time_s,tokens_per_s,mfu,hfu,"
         "compute_s,recompute_s,tp_comm_exposed_s,cp_comm_exposed_s,ep_comm_exposed_s,pp_bubble_s,"
         "pp_comm_exposed_s,dp_comm_exposed_s,optimizer_s,offload_exposed_s,mtp_s,other_s,"
         "weights_bytes,gradients_bytes,optimizer_states_bytes,activations_bytes,buffers_bytes,"
         "fragmentation_bytes,peak_bytes,fits";
}

std::string training_csv_row(const Scenario& scenario, const TrainingPrediction& p) {
  const ParallelConfig& par = scenario.parallel;
  const TrainingWorkload& w = scenario.training();
  const TimeBreakdown& t = p.time;
  const MemoryBreakdown& m = p.memory;
  std::string row = csv_field(scenario.name);
  row += fmt::format(",{},{},{},{},{},{},{},{}", par.world_size(), par.tp, par.pp, par.dp, par.cp, par.vpp,
                     w.micro_batch, w.global_batch);
  for (double v : {p.step_time.value(), p.tokens_per_s, p.mfu, p.hfu, t.compute.value(), t.recompute.value(),
                   t.tp_comm_exposed.value(), t.cp_comm_exposed.value(), t.ep_comm_exposed.value(), t.pp_bubble.value(),
                   t.pp_comm_exposed.value(), t.dp_comm_exposed.value(), t.optimizer.value(), t.offload_exposed.value(),
                   t.mtp.value(), t.other.value()}) {
    row += ',';
    row += csv_number(v);
  }
  for (Bytes b : {m.weights, m.gradients, m.optimizer_states, m.activations, m.buffers, m.fragmentation, m.peak}) {
    row += ',';
    row += csv_bytes(b);
  }
  row += p.fits ? ",true" : ",false";
  return row;
}

}  // namespace stepcast
