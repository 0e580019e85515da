#pragma once
// What Transformer Engine's userbuffers TP overlap (parallel.tp_comm_overlap with sequence
// parallelism) costs the GEMMs it overlaps. Times in seconds.
//
// TE overlaps each of the ten TP GEMMs of a transformer layer with its collective by one of three
// methods (transformer_engine/pytorch/module/base.py initialize_ub; NVIDIA/TransformerEngine,
// code-index id 883000803):
//   ring_exchange (qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad by default): the GEMM runs as tp
//     chunks (tp / 2 with aggregate), one per ring step; the peer copies go over the copy engines
//     (add_ub's use_ce defaults to True), so they take no SMs;
//   pipeline (proj_fprop, fc2_fprop): the GEMM runs as num_splits chunks, each chunk's
//     reduce-scatter a userbuffers kernel on num_sm SMs after it; the last chunk's is exposed;
//   bulk (qkv_dgrad, fc1_dgrad: the all-gather of the input for the weight gradient beside the
//     data-gradient GEMM; qkv_wgrad, fc1_wgrad: the data gradient's reduce-scatter beside the
//     weight-gradient GEMM): one GEMM beside a userbuffers kernel on num_sm SMs.
// With set_sm_margin the GEMM is launched on sm_count - num_sm SMs (CommOverlapCore:
// `_math_sms = set_sm_margin ? sm_count - num_comm_sm : sm_count`, transformer_engine/common/
// comm_gemm_overlap/comm_gemm_overlap.cpp, passed to cuBLAS as its SM count target); without it
// the GEMM takes every SM while the comm kernel holds num_sm of them for as long as it runs.
//
// userbuffers_overlap_gemm_time prices that: the GEMM's chunks, up to kUbComputeStreams at a time,
// each round priced by model/op_time.h on the SMs the GEMM gets (peak scaled by the SM share: the
// same clock), plus, when the comm kernel
// shares the SMs, min(comm x num_sm / S, gemm x num_sm / (S - num_sm)) — the GEMM running at
// (S - num_sm) / S of its rate while the comm kernel runs (all of the GEMM when the comm outlasts it).
#include <string_view>

#include "model/cost_parameters.h"
#include "model/hardware.h"
#include "model/op.h"
#include "model/units.h"

namespace stepcast {

enum class UbMethod { ring_exchange, pipeline, bulk };

// The compute streams a chunked overlap spreads its GEMM chunks over, round-robin
// (`_stream_compute[i % _stream_compute.size()]` in comm_gemm_overlap.cpp's split_overlap_*):
// min(_NUM_MAX_UB_STREAMS, chunks), _NUM_MAX_UB_STREAMS = 3 (base.py).
inline constexpr int kUbComputeStreams = 3;

struct UbGemmConfig {
  UbMethod method = UbMethod::ring_exchange;
  int num_sm = 16;           // the comm kernel's SMs (none taken for a copy-engine ring exchange)
  int num_splits = 0;        // pipeline chunks
  bool set_sm_margin = false;
  bool aggregate = false;    // ring exchange: two chunks per GEMM
};

// The layer's ten overlapped GEMMs, named as TE names them.
struct UbLayerConfig {
  UbGemmConfig qkv_fprop, proj_fprop, fc1_fprop, fc2_fprop;
  UbGemmConfig proj_dgrad, fc2_dgrad;
  UbGemmConfig qkv_dgrad, qkv_wgrad, fc1_dgrad, fc1_wgrad;
};

// TE's defaults when no ub_cfgs are given (base.py initialize_ub: add_ub's num_sm = 16,
// set_sm_margin = 0, num_splits = 4 for pipeline, ring exchange over the copy engines).
UbLayerConfig userbuffers_te_default();

// The config the framework's recipe passes for the shape: Megatron-Bridge's tuned tables
// (NVIDIA-NeMo/Megatron-Bridge src/megatron/bridge/training/comm_overlap.py @0685ff5d, the same
// values as NeMo's nemo/collections/llm/recipes/tp_overlap_configs/userbuffers.py @0594a700
// except fp8 H100 h16384, where NeMo has pipeline 24 / 8 SMs) for the hidden sizes they tune
// (6144 on H100; 8192, 12288, 16384 on H100 and B200), by the GPU's generation (Hopper: the
// H100 table; Blackwell, B200 and GB200: the B200 table) and by FP8 or 16-bit compute;
// TE's defaults for every other shape. The tables are named by TP size too (h16384: tp8 on H100,
// tp4 on B200); they are used whatever the run's TP size (an assumption: no other table exists).
UbLayerConfig userbuffers_config(GpuArchitecture arch, double hidden, bool fp8);

// Chunks the GEMM runs as: tp (tp / 2 aggregated) for ring exchange, num_splits for pipeline,
// 1 for bulk.
int userbuffers_gemm_chunks(const UbGemmConfig& cfg, int tp);

// The time of `gemm` (one op of the layer's kernels, m = its tokens) overlapped with a collective
// of `comm` seconds as `cfg` says.
Seconds userbuffers_overlap_gemm_time(const Op& gemm, Seconds comm, const UbGemmConfig& cfg, int tp,
                                      const GpuSpec& gpu, const CostParameters& params);

}  // namespace stepcast
