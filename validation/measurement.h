#pragma once
// What a harness measurement file holds (validation/SCHEMA.md documents every key; this header is
// its C++ form). The harness fills these values and writes them; `stepcast calibrate` reads them
// back through validation/measurement_json.h.
//
// Units: times in seconds, sizes in bytes, work in operations (FLOPs, or integer ops for INT8),
// rates per second, clocks in MHz. Shapes are element counts.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/collective.h"
#include "model/datatype.h"
#include "model/units.h"
#include "validation/stopping_criterion.h"

namespace stepcast {

inline constexpr std::string_view kMeasurementSchemaName = "stepcast.harness.measurements";
// Version 2 added a GEMM record's `algorithm`; version 1 files (without it) still load.
inline constexpr int kMeasurementSchemaVersion = 2;
inline constexpr int kOldestMeasurementSchemaVersion = 1;

enum class MeasurementKind { gemm, attention, elementwise, memory, collective, selftest };
std::string_view to_string(MeasurementKind kind);
std::optional<MeasurementKind> parse_measurement_kind(std::string_view text);

// C(m x n) = op(A)(m x k) . op(B)(k x n) in cuBLAS column-major terms, `batch` independent
// products, `groups` > 1 for an MoE grouped GEMM (that many products of this shape, one per expert).
struct GemmInputs {
  DataType precision = DataType::bf16;  // fp32, tf32, fp16, bf16, fp8 or int8
  std::string a_type;                   // element formats: fp32 fp16 bf16 e4m3 e5m2 int8
  std::string b_type;
  std::string c_type;                   // fp32 fp16 bf16 int32
  std::string compute_type;             // fp32, tf32 or int32 accumulation
  std::string layout = "TN";            // op(A), op(B): TN (forward), NN (data grad), NT (weight grad)
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
  std::int64_t groups = 1;
  std::string role;                     // optional: qkv, attn_out, fc1, fc2, ... ("" when generic)
  bool operator==(const GemmInputs&) const = default;
};

enum class AttentionDirection { forward, backward, decode };
std::string_view to_string(AttentionDirection d);

// Q [batch, seq_q, heads, head_dim], K and V [batch, seq_kv, kv_heads, head_dim] (BSHD).
// Decode reads K and V from a paged cache of `kv_block`-token blocks.
struct AttentionInputs {
  std::string impl;                      // cudnn_sdpa, stepcast_flash, stepcast_paged_decode
  AttentionDirection direction = AttentionDirection::forward;
  DataType dtype = DataType::bf16;
  std::int64_t batch = 1;
  std::int64_t heads = 1;
  std::int64_t kv_heads = 1;
  std::int64_t seq_q = 1;
  std::int64_t seq_kv = 1;
  std::int64_t head_dim = 128;
  bool causal = false;
  std::int64_t kv_block = 0;             // paged decode only; 0 otherwise
  bool operator==(const AttentionInputs&) const = default;
};

struct ElementwiseInputs {
  std::string op;                        // rmsnorm layernorm softmax swiglu gelu rope bias_dropout_add
  DataType dtype = DataType::bf16;
  std::int64_t rows = 0;                 // tokens
  std::int64_t cols = 0;                 // hidden (swiglu: output width; rope: heads * head_dim)
  bool operator==(const ElementwiseInputs&) const = default;
};

struct MemoryInputs {
  std::string op;                        // copy, triad, memcpy_d2d
  DataType dtype = DataType::fp32;
  std::int64_t elements = 0;             // per array
  bool operator==(const MemoryInputs&) const = default;
};

// size_bytes follows nccl-tests (model/collective.h): all_reduce/broadcast/send_recv the buffer
// on each rank; all_gather the gathered output; reduce_scatter the whole input; all_to_all the
// per-rank send buffer. algbw = size_bytes / time; busbw = algbw * bus factor.
struct CollectiveInputs {
  CollectiveOp op = CollectiveOp::all_reduce;
  std::string dtype = "fp32";
  std::string redop = "sum";
  std::int64_t size_bytes = 0;
  std::int64_t count = 0;                // elements per rank as nccl-tests prints "count"
  int ranks = 1;
  int nodes = 1;
  int ranks_per_node = 1;
  bool in_place = false;
  int root = 0;
  bool operator==(const CollectiveInputs&) const = default;
};

struct SelftestInputs {
  std::string test;                      // spin_kernel, d2d_copy
  double expected = 0.0;                 // spin: expected seconds; copy: datasheet-derived bytes/s
  double measured = 0.0;                 // same unit as expected
  double limit = 0.0;                    // spin: max relative error; copy: min share of expected
  bool passed = false;
  bool operator==(const SelftestInputs&) const = default;
};

using MeasurementInputs =
    std::variant<GemmInputs, AttentionInputs, ElementwiseInputs, MemoryInputs, CollectiveInputs, SelftestInputs>;

struct TimeStats {
  double median_s = 0.0;
  double min_s = 0.0;
  double max_s = 0.0;
  double mean_s = 0.0;
  double p10_s = 0.0;
  double p90_s = 0.0;
  double rel_stdev = 0.0;
  std::int64_t samples = 0;
  bool operator==(const TimeStats&) const = default;
};

// How the samples were taken. cold: one launch per sample, L2 flushed first, CUDA events with
// the stream held by a blocking kernel. hot: `batch` back-to-back launches per sample, time / batch.
// host_timer: nccl-tests style, wall clock around `batch` collectives and a stream sync.
struct MethodInfo {
  std::string mode = "cold";
  std::int64_t batch = 1;
  StopReason stop_reason = StopReason::converged;
  double wall_s = 0.0;
  std::int64_t throttled_discarded = 0;
  std::optional<double> sm_clock_mhz;    // mean SM clock across the kept samples, when measured
  bool operator==(const MethodInfo&) const = default;
};

// The result check of the timed runs: outputs compared with a CPU reference (or, for
// collectives, with the value every element must hold).
struct CheckInfo {
  bool passed = false;
  std::string method;
  std::int64_t checked = 0;              // elements compared
  double max_abs_error = 0.0;
  double max_rel_error = 0.0;
  double tolerance = 0.0;
  bool operator==(const CheckInfo&) const = default;
};

struct CollectiveResult {
  double algbw_bytes_per_s = 0.0;
  double busbw_bytes_per_s = 0.0;
  double bus_factor = 1.0;
  std::optional<double> nccl_estimate_s;  // ncclGroupSimulateEnd, where the NCCL version has it
  bool operator==(const CollectiveResult&) const = default;
};

// The kernel a GEMM record ran (validation/SCHEMA.md, `algorithm`): the cuBLASLt algorithm its
// heuristic offered and cuBLASLt accepted, read back from the cublasLtMatmulAlgo_t with
// cublasLtMatmulAlgoConfigGetAttribute (kernels/gemm_algorithm.h). Ids are cublasLt.h's enum
// values; names are that header's spelling of them, "" where it has none (written as null).
// Every GEMM the harness times goes through cuBLASLt, so `library` is always "cublasLt".
struct GemmAlgorithm {
  std::string library = "cublasLt";
  std::int64_t id = 0;                   // CUBLASLT_ALGO_CONFIG_ID
  std::int64_t tile_id = 0;              // cublasLtMatmulTile_t
  std::string tile;                      // "128x256" (rows x columns of C per CTA), "undefined"
  std::int64_t stages_id = 0;            // cublasLtMatmulStages_t
  std::string stages;                    // "64x3", "undefined"
  std::int64_t splitk_num = 1;           // K splits run in parallel
  std::string reduction_scheme = "none";  // how they are summed: none, inplace, compute_type, output_type
  std::int64_t cta_swizzling = 0;        // 0 or 1
  std::int64_t custom_option = 0;
  std::optional<std::int64_t> inner_shape_id;    // cublasLtMatmulInnerShape_t; absent: not reported
  std::string inner_shape;               // "MMA16816", "undefined"
  std::optional<std::int64_t> cluster_shape_id;  // cublasLtClusterShape_t; absent: not reported
  std::string cluster_shape;             // "2x1x1", "auto"
  std::int64_t heuristic_rank = 1;       // 1-based place in the heuristic's list of the one that ran
  std::int64_t heuristic_results = 1;    // algorithms the heuristic returned
  std::int64_t workspace_bytes = 0;      // the heuristic's workspace for it
  std::optional<double> waves_count;     // the heuristic's wavesCount for it
  bool operator==(const GemmAlgorithm&) const = default;
};

struct Measurement {
  std::string name;
  int device = 0;                        // CUDA device ordinal; one of Provenance::devices' indices
  MeasurementInputs inputs;
  Flops flops;
  Bytes bytes;                           // minimum traffic to and from device memory
  TimeStats time;
  MethodInfo method;
  CheckInfo check;
  std::optional<CollectiveResult> collective;  // present exactly for kind() == collective
  std::optional<GemmAlgorithm> algorithm;      // GEMM records from schema_version 2 on
  std::vector<std::string> notes;

  [[nodiscard]] MeasurementKind kind() const { return static_cast<MeasurementKind>(inputs.index()); }
  bool operator==(const Measurement&) const = default;
};

struct ClockState {
  std::string source = "unavailable";    // nvml, or unavailable (with `note` saying why)
  std::string note;
  std::optional<double> sm_mhz;
  std::optional<double> memory_mhz;
  std::optional<double> max_sm_mhz;
  std::optional<double> max_memory_mhz;
  std::optional<double> application_sm_mhz;
  std::optional<double> temperature_c;
  std::optional<double> power_limit_w;
  std::vector<std::string> throttle_reasons;
  bool operator==(const ClockState&) const = default;
};

struct DeviceInfo {
  int index = 0;                           // CUDA device ordinal on its host
  std::string name;
  std::optional<std::string> catalog_gpu;  // scenarios catalog key when recognised
  std::string uuid;
  std::string pci_bus_id;
  std::string compute_capability;          // "9.0"
  int sm_count = 0;
  std::int64_t memory_bytes = 0;
  std::int64_t l2_cache_bytes = 0;
  int memory_bus_width_bits = 0;
  double max_sm_clock_mhz = 0.0;           // CUDA's default (boost) clock; throttle reference
  double max_memory_clock_mhz = 0.0;
  double theoretical_memory_bandwidth_bytes_per_s = 0.0;  // 2 x memory clock x bus width
  std::optional<bool> ecc_enabled;
  ClockState clocks_at_start;
  ClockState clocks_at_end;
  bool operator==(const DeviceInfo&) const = default;
};

struct MeasurementMethod {
  bool l2_flush = true;
  bool blocking_kernel = true;
  int warmup_runs = 1;
  StoppingRule stopping;
  double throttle_threshold = 0.75;
  double throttle_recovery_delay_s = 0.05;
  bool operator==(const MeasurementMethod&) const = default;
};

struct Provenance {
  std::string tool = "stepcast-harness";
  std::string tool_version;
  std::string git_sha;
  std::vector<std::string> argv;
  std::string command;                     // gemm, attention, ..., all
  std::string started_utc;                 // ISO 8601, e.g. 2025-06-01T12:00:00Z
  std::string finished_utc;
  std::string host;
  std::optional<std::string> driver_version;   // from NVML; the CUDA driver API version is below
  std::string cuda_driver_api;             // "13.0"
  std::string cuda_runtime;
  std::string cublas;
  std::optional<std::string> cudnn;        // absent when built without cuDNN
  std::optional<std::string> nccl;
  std::string cuda_architectures;          // what the kernels were compiled for: "80;89;90"
  int ranks = 1;                           // processes x GPUs taking part (collectives)
  int nodes = 1;
  std::vector<DeviceInfo> devices;
  MeasurementMethod method;
  bool operator==(const Provenance&) const = default;
};

struct SkippedPoint {
  std::string kind;
  std::string name;
  std::string reason;
  bool operator==(const SkippedPoint&) const = default;
};

struct MeasurementFile {
  int schema_version = kMeasurementSchemaVersion;
  Provenance provenance;
  std::vector<Measurement> records;
  std::vector<SkippedPoint> skipped;       // points not measured, and why (unsupported, failed)
  bool complete = true;                    // false when --max-wall ended the run early
  bool operator==(const MeasurementFile&) const = default;
};

}  // namespace stepcast
