#include "simulator/training_layouts.h"

#include <algorithm>
#include <cassert>

#include "model/divisors.h"
#include "model/op_checkpoint.h"

namespace stepcast {

void apply_layout(const TrainingLayout& l, Scenario& sc) {
  ParallelConfig& p = sc.parallel;
  p.tp = l.tp;
  p.cp = l.cp;
  p.ep = l.ep;
  p.pp = l.pp;
  p.dp = l.dp;
  p.vpp = l.vpp;
  p.sequence_parallel = l.sequence_parallel;
  p.schedule = l.schedule;
  p.recompute = l.recompute;
  p.recompute_layers = 0;     // layouts recompute every layer or none
  p.recompute_modules = {};   // and selective is Megatron-Core's default, the attention core
  p.zero = l.zero;
  p.tp_comm_overlap = l.tp_comm_overlap;
  p.overlap_grad_reduce = l.overlap_grad_reduce;
  p.overlap_param_gather = l.overlap_param_gather;
  p.fsdp = l.fsdp;
  p.checkpoint = l.checkpoint;
  p.first_stage_layers = -1;  // layouts split the layers evenly
  p.last_stage_layers = -1;
  std::get<TrainingWorkload>(sc.workload).micro_batch = l.micro_batch;
}

LayoutSpace::LayoutSpace(const Scenario& base, const LayoutSpaceOptions& options) {
  assert(base.is_training());
  const TransformerSpec& m = base.model;
  const TrainingWorkload& t = base.training();
  const ParallelConfig& fixed = base.parallel;
  const int gpus = base.system.gpus;
  // The recompute choices the loader takes for this model: selective_op only where it is priced.
  std::vector<Recompute> recompute = options.recompute;
  if (!selective_op_applies(m)) std::erase(recompute, Recompute::selective_op);
  const bool interleavable = std::find(options.schedules.begin(), options.schedules.end(),
                                       PipelineSchedule::one_f_one_b) != options.schedules.end();

  // Expert TP as the scenario sets it, or following tp (its default).
  const auto expert_tp_for = [&](int tp) { return fixed.expert_tp > 0 ? fixed.expert_tp : tp; };
  for (int tp : divisors(gpus)) {
    if (m.heads % tp != 0 || (m.kv_heads % tp != 0 && tp % m.kv_heads != 0)) continue;
    for (int cp : divisors(gpus / tp)) {
      if (cp > 1 && (!options.context_parallel || t.seq_len % (2 * cp) != 0)) continue;
      // Packed documents split into 2*cp chunks each, as the loader requires (scenario_checks.cpp).
      if (cp > 1 && t.document_tokens > 0 && t.document_tokens % (2 * cp) != 0) continue;
      if (cp > 1 && fixed.cp_kind == ContextParallelKind::ulysses && m.heads % (tp * cp) != 0) continue;
      for (int pp : divisors(gpus / (tp * cp))) {
        if (m.layers % pp != 0) continue;
        const int dp = gpus / (tp * cp * pp);
        if (t.global_batch % dp != 0) continue;
        // Expert parallelism divides the experts, and expert_tp*ep divides tp*cp*dp (Megatron-Core's
        // parallel folding, model/placement.h).
        std::vector<int> eps = {1};
        if (m.is_moe()) {
          eps.clear();
          for (int ep : divisors(m.moe.experts)) {
            if ((tp * cp * dp) % (expert_tp_for(tp) * ep) == 0) eps.push_back(ep);
          }
        } else if ((tp * cp * dp) % expert_tp_for(tp) != 0) {
          continue;
        }
        for (int ep : eps) {
          for (int mb : divisors(t.global_batch / dp)) {
            if (options.max_micro_batch > 0 && mb > options.max_micro_batch) continue;
            const int microbatches = t.global_batch / (dp * mb);
            Block b;
            b.tp = tp;
            b.cp = cp;
            b.ep = ep;
            b.pp = pp;
            b.dp = dp;
            b.micro_batch = mb;
            if (pp == 1) {
              // No pipeline: Megatron runs each micro-batch's forward then its backward
              // (forward_backward_no_pipelining), which is 1F1B on one stage. Other orders take the
              // same time and only hold more activations.
              b.pipelines.emplace_back(1, PipelineSchedule::one_f_one_b);
            } else {
              for (PipelineSchedule s : options.schedules) b.pipelines.emplace_back(1, s);
              if (interleavable && microbatches % pp == 0) {
                for (int vpp : divisors(m.layers / pp)) {
                  if (vpp > 1) b.pipelines.emplace_back(vpp, PipelineSchedule::one_f_one_b);
                }
              }
            }
            b.sequence_parallel = {false};
            if (tp > 1 && t.seq_len % tp == 0) b.sequence_parallel.push_back(true);
            b.recompute = recompute;
            b.fsdp = fixed.fsdp;
            b.checkpoint = fixed.checkpoint;
            // MXFP8 weights ride on the distributed optimizer (mxfp8_weights_supported): zero 1 or 2.
            const bool mxfp8_weights = base.precision.params == DataType::mxfp8;
            std::vector<int> zeros;
            for (int z : options.zero) {
              if (mxfp8_weights && !mxfp8_weights_supported(z, dp)) continue;
              if (dp > 1 || z == 0) zeros.push_back(z);
            }
            if (zeros.empty()) zeros.push_back(mxfp8_weights && dp > 1 ? 1 : 0);
            for (int z : zeros) {
              const std::vector<bool> keep_tp = {fixed.tp_comm_overlap};
              const std::vector<bool> both = {false, true};
              const bool search = options.overlap_flags;
              const std::vector<bool>& tp_overlap = search && tp > 1 ? both : keep_tp;
              const std::vector<bool> keep_grad = {fixed.overlap_grad_reduce};
              const std::vector<bool>& grad = search && dp > 1 ? both : keep_grad;
              const std::vector<bool> keep_param = {fixed.overlap_param_gather};
              const std::vector<bool>& param = search && dp > 1 && (z == 1 || z == 2) ? both : keep_param;
              for (bool t_o : tp_overlap) {
                for (bool g : grad) {
                  for (bool pg : param) b.states.push_back({z, t_o, g, pg});
                }
              }
            }
            b.size = b.pipelines.size() * b.sequence_parallel.size() * b.recompute.size() * b.states.size();
            if (b.size == 0) continue;
            b.offset = m_size;
            m_size += b.size;
            m_blocks.push_back(std::move(b));
          }
        }
      }
    }
  }
}

TrainingLayout LayoutSpace::layout_in(const Block& b, std::uint64_t index) {
  TrainingLayout l;
  l.tp = b.tp;
  l.cp = b.cp;
  l.ep = b.ep;
  l.pp = b.pp;
  l.dp = b.dp;
  l.micro_batch = b.micro_batch;
  const std::uint64_t nz = b.states.size();
  const std::uint64_t nr = b.recompute.size();
  const std::uint64_t ns = b.sequence_parallel.size();
  const LayoutSpace::Block::State& state = b.states[index % nz];
  l.zero = state.zero;
  l.tp_comm_overlap = state.tp_comm_overlap;
  l.overlap_grad_reduce = state.overlap_grad_reduce;
  l.overlap_param_gather = state.overlap_param_gather;
  index /= nz;
  l.recompute = b.recompute[index % nr];
  l.fsdp = l.zero == 3 ? b.fsdp : FsdpImplementation::megatron;
  l.checkpoint = l.recompute == Recompute::full || l.recompute == Recompute::selective_op ? b.checkpoint
                                                                                          : CheckpointImplementation::megatron;
  index /= nr;
  l.sequence_parallel = b.sequence_parallel[index % ns];
  index /= ns;
  const auto& [vpp, schedule] = b.pipelines[index];
  l.vpp = vpp;
  l.schedule = schedule;
  return l;
}

TrainingLayout LayoutSpace::at(std::uint64_t index) const {
  assert(index < m_size);
  const auto it = std::upper_bound(m_blocks.begin(), m_blocks.end(), index,
                                   [](std::uint64_t i, const Block& b) { return i < b.offset; });
  const Block& b = *(it - 1);
  return layout_in(b, index - b.offset);
}

}  // namespace stepcast
