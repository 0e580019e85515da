#pragma once
// The spelling of every enum value in scenario files, catalogs and reports.
//
// One table per enum, used in both directions: the loaders parse with parse_enum<E>() and list
// enum_spellings<E>() in error messages; the writers and reports print enum_name(). These
// spellings are part of the public scenario format (DESIGN.md): extend, do not rename.

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/hardware.h"
#include "model/parallel.h"
#include "model/precision.h"
#include "model/transformer.h"
#include "model/workload.h"

namespace stepcast {

template <class E>
struct EnumTable;  // specialised below: static constexpr std::array<std::pair<E, std::string_view>, N> values

template <>
struct EnumTable<PipelineSchedule> {
  static constexpr std::array values = {
      std::pair{PipelineSchedule::gpipe, std::string_view("gpipe")},
      std::pair{PipelineSchedule::one_f_one_b, std::string_view("1f1b")},
      std::pair{PipelineSchedule::zb_h1, std::string_view("zb-h1")},
      std::pair{PipelineSchedule::zb_h2, std::string_view("zb-h2")},
      std::pair{PipelineSchedule::dualpipe, std::string_view("dualpipe")}};
};

template <>
struct EnumTable<Recompute> {
  static constexpr std::array values = {std::pair{Recompute::none, std::string_view("none")},
                                        std::pair{Recompute::selective, std::string_view("selective")},
                                        std::pair{Recompute::full, std::string_view("full")},
                                        std::pair{Recompute::selective_op, std::string_view("selective_op")}};
};

template <>
struct EnumTable<RecomputeModule> {
  static constexpr std::array values = {
      std::pair{RecomputeModule::core_attn, std::string_view("core_attn")},
      std::pair{RecomputeModule::moe_act, std::string_view("moe_act")},
      std::pair{RecomputeModule::layernorm, std::string_view("layernorm")},
      std::pair{RecomputeModule::mla_up_proj, std::string_view("mla_up_proj")},
      std::pair{RecomputeModule::mlp, std::string_view("mlp")},
      std::pair{RecomputeModule::moe, std::string_view("moe")},
      std::pair{RecomputeModule::shared_experts, std::string_view("shared_experts")}};
};

template <>
struct EnumTable<Offload> {
  static constexpr std::array values = {
      std::pair{Offload::none, std::string_view("none")},
      std::pair{Offload::optimizer, std::string_view("optimizer")},
      std::pair{Offload::optimizer_and_params, std::string_view("optimizer+params")}};
};

template <>
struct EnumTable<ContextParallelKind> {
  static constexpr std::array values = {std::pair{ContextParallelKind::ring, std::string_view("ring")},
                                        std::pair{ContextParallelKind::ulysses, std::string_view("ulysses")},
                                        std::pair{ContextParallelKind::all_gather, std::string_view("all_gather")},
                                        std::pair{ContextParallelKind::ring_allgather, std::string_view("ring_allgather")}};
};

template <>
struct EnumTable<ExpertDispatcher> {
  static constexpr std::array values = {std::pair{ExpertDispatcher::alltoall, std::string_view("alltoall")},
                                        std::pair{ExpertDispatcher::deepep, std::string_view("deepep")},
                                        std::pair{ExpertDispatcher::hybridep, std::string_view("hybridep")}};
};

template <>
struct EnumTable<CheckpointImplementation> {
  static constexpr std::array values = {std::pair{CheckpointImplementation::megatron, std::string_view("megatron")},
                                        std::pair{CheckpointImplementation::pytorch, std::string_view("pytorch")}};
};

template <>
struct EnumTable<FsdpImplementation> {
  static constexpr std::array values = {std::pair{FsdpImplementation::megatron, std::string_view("megatron")},
                                        std::pair{FsdpImplementation::fsdp2, std::string_view("fsdp2")}};
};

template <>
struct EnumTable<MoeGroupedGemm> {
  static constexpr std::array values = {std::pair{MoeGroupedGemm::per_expert, std::string_view("per_expert")},
                                        std::pair{MoeGroupedGemm::grouped, std::string_view("grouped")}};
};

template <>
struct EnumTable<CudaGraphs> {
  static constexpr std::array values = {std::pair{CudaGraphs::none, std::string_view("none")},
                                        std::pair{CudaGraphs::full_iteration, std::string_view("full_iteration")}};
};

template <>
struct EnumTable<MlpKind> {
  static constexpr std::array values = {std::pair{MlpKind::gelu, std::string_view("gelu")},
                                        std::pair{MlpKind::swiglu, std::string_view("swiglu")},
                                        std::pair{MlpKind::relu2, std::string_view("relu2")}};
};

template <>
struct EnumTable<NormKind> {
  static constexpr std::array values = {std::pair{NormKind::layernorm, std::string_view("layernorm")},
                                        std::pair{NormKind::rmsnorm, std::string_view("rmsnorm")}};
};

template <>
struct EnumTable<PositionEmbedding> {
  static constexpr std::array values = {std::pair{PositionEmbedding::learned, std::string_view("learned")},
                                        std::pair{PositionEmbedding::rotary, std::string_view("rotary")},
                                        std::pair{PositionEmbedding::alibi, std::string_view("alibi")},
                                        std::pair{PositionEmbedding::yarn, std::string_view("yarn")}};
};

template <>
struct EnumTable<KernelFusion> {
  static constexpr std::array values = {std::pair{KernelFusion::fused, std::string_view("fused")},
                                        std::pair{KernelFusion::eager, std::string_view("eager")}};
};

template <>
struct EnumTable<AttentionKernel> {
  static constexpr std::array values = {std::pair{AttentionKernel::best, std::string_view("best")},
                                        std::pair{AttentionKernel::flash2, std::string_view("flash2")},
                                        std::pair{AttentionKernel::triton, std::string_view("triton")}};
};

template <>
struct EnumTable<CrossEntropyFusion> {
  static constexpr std::array values = {std::pair{CrossEntropyFusion::native, std::string_view("native")},
                                        std::pair{CrossEntropyFusion::fused, std::string_view("fused")},
                                        std::pair{CrossEntropyFusion::te, std::string_view("te")},
                                        std::pair{CrossEntropyFusion::pytorch, std::string_view("pytorch")}};
};

template <>
struct EnumTable<GpuArchitecture> {
  static constexpr std::array values = {std::pair{GpuArchitecture::ampere, std::string_view("ampere")},
                                        std::pair{GpuArchitecture::ada, std::string_view("ada")},
                                        std::pair{GpuArchitecture::hopper, std::string_view("hopper")},
                                        std::pair{GpuArchitecture::blackwell, std::string_view("blackwell")},
                                        std::pair{GpuArchitecture::cdna3, std::string_view("cdna3")}};
};

template <>
struct EnumTable<FabricKind> {
  static constexpr std::array values = {
      std::pair{FabricKind::rail_optimized_fat_tree, std::string_view("rail-optimized")},
      std::pair{FabricKind::fat_tree, std::string_view("fat-tree")},
      std::pair{FabricKind::none, std::string_view("none")}};
};

template <>
struct EnumTable<Transport> {
  static constexpr std::array values = {std::pair{Transport::infiniband, std::string_view("infiniband")},
                                        std::pair{Transport::roce, std::string_view("roce")},
                                        std::pair{Transport::efa, std::string_view("efa")},
                                        std::pair{Transport::tcpxo, std::string_view("tcpxo")},
                                        std::pair{Transport::nvlink, std::string_view("nvlink")}};
};

template <>
struct EnumTable<InferenceMode> {
  static constexpr std::array values = {std::pair{InferenceMode::static_batch, std::string_view("static")},
                                        std::pair{InferenceMode::serving, std::string_view("serving")}};
};

template <>
struct EnumTable<BatchScheduler> {
  static constexpr std::array values = {std::pair{BatchScheduler::continuous, std::string_view("continuous")},
                                        std::pair{BatchScheduler::static_batch, std::string_view("static")},
                                        std::pair{BatchScheduler::dynamic, std::string_view("dynamic")}};
};

template <>
struct EnumTable<DecodeAttention> {
  static constexpr std::array values = {
      std::pair{DecodeAttention::grouped, std::string_view("grouped")},
      std::pair{DecodeAttention::per_query_head, std::string_view("per-query-head")}};
};

template <>
struct EnumTable<ArrivalProcess> {
  static constexpr std::array values = {std::pair{ArrivalProcess::poisson, std::string_view("poisson")},
                                        std::pair{ArrivalProcess::gamma, std::string_view("gamma")},
                                        std::pair{ArrivalProcess::all_at_once, std::string_view("all-at-once")},
                                        std::pair{ArrivalProcess::trace, std::string_view("trace")},
                                        std::pair{ArrivalProcess::closed_loop, std::string_view("closed-loop")}};
};

template <>
struct EnumTable<LengthDistribution> {
  static constexpr std::array values = {
      std::pair{LengthDistribution::fixed, std::string_view("fixed")},
      std::pair{LengthDistribution::uniform, std::string_view("uniform")},
      std::pair{LengthDistribution::lognormal, std::string_view("lognormal")},
      std::pair{LengthDistribution::exponential, std::string_view("exponential")}};
};

template <>
struct EnumTable<ServingWorkload::Preemption> {
  static constexpr std::array values = {
      std::pair{ServingWorkload::Preemption::recompute, std::string_view("recompute")},
      std::pair{ServingWorkload::Preemption::swap, std::string_view("swap")}};
};

template <>
struct EnumTable<ServingWorkload::KvAdmission> {
  static constexpr std::array values = {
      std::pair{ServingWorkload::KvAdmission::on_demand, std::string_view("on_demand")},
      std::pair{ServingWorkload::KvAdmission::reserve, std::string_view("reserve")}};
};

template <>
struct EnumTable<Fp8Scaling> {
  static constexpr std::array values = {std::pair{Fp8Scaling::delayed, std::string_view("delayed")},
                                        std::pair{Fp8Scaling::current, std::string_view("current")}};
};

template <>
struct EnumTable<Fp8AmaxGroup> {
  static constexpr std::array values = {std::pair{Fp8AmaxGroup::stage, std::string_view("stage")},
                                        std::pair{Fp8AmaxGroup::tp, std::string_view("tp")}};
};

template <>
struct EnumTable<DataType> {
  static constexpr std::array values = {
      std::pair{DataType::fp32, to_string(DataType::fp32)},   std::pair{DataType::tf32, to_string(DataType::tf32)},
      std::pair{DataType::fp16, to_string(DataType::fp16)},   std::pair{DataType::bf16, to_string(DataType::bf16)},
      std::pair{DataType::fp8, to_string(DataType::fp8)},     std::pair{DataType::int8, to_string(DataType::int8)},
      std::pair{DataType::int4, to_string(DataType::int4)},   std::pair{DataType::mxfp8, to_string(DataType::mxfp8)},
      std::pair{DataType::nvfp4, to_string(DataType::nvfp4)}};
};

template <class E>
constexpr std::string_view enum_name(E value) {
  for (const auto& [v, name] : EnumTable<E>::values) {
    if (v == value) return name;
  }
  return "?";
}

template <class E>
constexpr std::optional<E> parse_enum(std::string_view text) {
  for (const auto& [v, name] : EnumTable<E>::values) {
    if (name == text) return v;
  }
  return std::nullopt;
}

template <class E>
std::vector<std::string> enum_spellings() {
  std::vector<std::string> out;
  for (const auto& entry : EnumTable<E>::values) out.emplace_back(entry.second);
  return out;
}

// A set of recompute modules as a scenario file writes it, in the table order: "[moe_act, layernorm]".
inline std::string recompute_modules_text(RecomputeModules modules) {
  std::string out = "[";
  for (const auto& [m, name] : EnumTable<RecomputeModule>::values) {
    if (!modules.has(m)) continue;
    if (out.size() > 1) out += ", ";
    out += name;
  }
  return out + "]";
}

}  // namespace stepcast
