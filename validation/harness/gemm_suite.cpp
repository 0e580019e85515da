// GEMM suite: cuBLASLt GEMMs over the grid of validation/harness_grids.h, each checked on sampled
// output elements against a double-precision dot product of the operands as stored on the device.
//
// MoE grouped GEMMs run as a loop of per-expert cuBLASLt calls on one stream, which is what
// Megatron-Core's sequential expert path does; cuBLASLt's grouped GEMM API differs across CUDA
// versions and is not used, so a fused grouped kernel may be faster than what is measured here
// (the record's notes say so).
//
// Every record carries `algorithm`: the cuBLASLt kernel that ran (algorithm id, tile, stages,
// split-K, cluster shape, ...; kernels/gemm_algorithm.h), so a fit can tell a shape whose kernel
// changed from one the model misprices. Every GEMM here goes through cuBLASLt; none through
// plain cuBLAS (cublasGemmEx).
//
// FP8 GEMMs try the cuBLASLt set-ups of validation/fp8_gemm_configurations.h in order; the
// record's notes name the one that ran and `skipped` holds each refused one with cuBLASLt's
// status and logged reason.

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/cuda_check.h"
#include "kernels/gemm_algorithm.h"
#include "kernels/memory_ops.h"
#include "validation/fp8_gemm_configurations.h"
#include "validation/harness/check_helpers.h"
#include "validation/harness/device_data.h"
#include "validation/harness/suites.h"
#include "validation/harness_grids.h"
#include "validation/measurement_records.h"

namespace stepcast::harness {

namespace {

// Kernels this short are also measured hot (back to back), where launch gaps do not hide them.
constexpr double kHotBelowSeconds = 20e-6;
// Sampled outputs per checked product.
constexpr int kCheckedRows = 4;
constexpr int kCheckedCols = 4;

// Relative tolerance per precision. Inputs are uniform in [-1, 1), so |C| ~ sqrt(k) / 3; the
// absolute tolerance is this times that magnitude. Output rounding dominates: bf16 keeps 8
// significant bits (2^-9 = 0.2% half-ulp), fp16 11; TF32 rounds inputs to 11 bits; FP8 inputs
// are compared as decoded, so only fp32 accumulation and the bf16 output remain.
double tolerance(DataType precision) {
  switch (precision) {
    case DataType::fp32: return 1e-4;
    case DataType::int8: return 0.0;
    case DataType::fp16: return 1e-2;
    case DataType::tf32: return 1e-2;
    default: return 2e-2;
  }
}

// FP8 with fast accumulation: Hopper's tensor cores then keep about 14 bits of the running sum
// between promotions, which DeepSeek-AI measured as up to ~2% relative error at K = 4096
// (DeepSeek-V3 technical report, 2024, Sec. 3.3.2); our K reach 28672.
constexpr double kFp8FastAccumulationTolerance = 5e-2;

kernels::GemmSpec spec_of(const GemmInputs& g) {
  kernels::GemmSpec s;
  s.a = *kernels::parse_element_format(g.a_type);
  s.b = *kernels::parse_element_format(g.b_type);
  s.c = *kernels::parse_element_format(g.c_type);
  s.compute = g.compute_type == "tf32"    ? kernels::GemmCompute::tf32
              : g.compute_type == "int32" ? kernels::GemmCompute::int32
                                          : kernels::GemmCompute::fp32;
  s.transpose_a = g.layout[0] == 'T';
  s.transpose_b = g.layout[1] == 'T';
  s.m = g.m;
  s.n = g.n;
  s.k = g.k;
  s.batch = g.batch;
  return s;
}

// The record's `algorithm`: the cuBLASLt algorithm `plan` last ran, read back from its
// cublasLtMatmulAlgo_t, with the heuristic's rank, result count, workspace and waves for it.
// nullopt, with a note saying why, when cuBLASLt reports a reduction scheme cublasLt.h does not
// define (the file's reader accepts only the header's four), or when it will not report one of the
// required attributes: the timing stands without the record (this read-back has not yet run on a
// GPU, and one refused attribute must not cost a device session its GEMM points).
std::optional<GemmAlgorithm> algorithm_record(const kernels::GemmPlan& plan, std::vector<std::string>& notes) {
  kernels::GemmAlgorithmConfig c;
  try {
    c = kernels::read_algorithm_config(plan.algorithm());
  } catch (const kernels::CudaError& e) {
    notes.push_back(std::string("algorithm not recorded: ") + e.what());
    return std::nullopt;
  }
  GemmAlgorithm a;
  a.library = "cublasLt";
  a.id = c.id;
  a.tile_id = c.tile_id;
  a.tile = kernels::tile_name(c.tile_id);
  a.stages_id = c.stages_id;
  a.stages = kernels::stages_name(c.stages_id);
  a.splitk_num = c.splitk_num;
  a.reduction_scheme = kernels::reduction_scheme_name(c.reduction_scheme);
  if (a.reduction_scheme.empty()) {
    notes.push_back("cuBLASLt reported reduction scheme " + std::to_string(c.reduction_scheme) +
                    ", which cublasLt.h does not define: algorithm not recorded");
    return std::nullopt;
  }
  a.cta_swizzling = c.cta_swizzling;
  a.custom_option = c.custom_option;
  if (c.inner_shape_id) {
    a.inner_shape_id = *c.inner_shape_id;
    a.inner_shape = kernels::inner_shape_name(*c.inner_shape_id);
  }
  if (c.cluster_shape_id) {
    a.cluster_shape_id = *c.cluster_shape_id;
    a.cluster_shape = kernels::cluster_shape_name(*c.cluster_shape_id);
  }
  a.heuristic_rank = plan.algorithm_used() + 1;
  a.heuristic_results = plan.algorithms_offered();
  a.workspace_bytes = static_cast<std::int64_t>(plan.workspace_bytes());
  const double waves = plan.waves_count();
  if (waves >= 0.0 && std::isfinite(waves)) a.waves_count = waves;
  return a;
}

}  // namespace

namespace {
// The B scale sits this many floats after the A scale, so each scale pointer is 256-byte aligned
// like every other cuBLASLt operand (on an H200, FP8 GEMMs with the two scales 4 bytes apart were
// refused by every algorithm; whether this alignment is the cause is not yet confirmed on a GPU).
constexpr std::size_t kScaleStride = 64;
}  // namespace

GemmRunner::GemmRunner(Session& session)
    : m_session(session), m_workspace(kernels::kGemmWorkspaceBytes), m_scales(2 * kScaleStride * sizeof(float)) {
  kernels::fill_constant(session.stream(), m_scales.get(), kernels::ElementFormat::fp32, 2 * kScaleStride, 1.0f);
  STEPCAST_CUDA(cudaStreamSynchronize(session.stream()));
}

void GemmRunner::measure(const GemmInputs& requested, const std::string& label) {
  Session& session = m_session;
  const cudaStream_t stream = session.stream();
  const std::string name = label + point_name(requested);
  if (requested.precision == DataType::fp8 && session.compute_capability() < 89) {
    session.skip("gemm", name, "FP8 GEMMs need compute capability 8.9 or newer; this GPU is " +
                                   session.device_info().compute_capability);
    return;
  }
  const bool fp8 = requested.precision == DataType::fp8;
  kernels::GemmSpec spec = spec_of(requested);
  // `products` = groups x batch products, their operands stored back to back.
  const std::size_t products = static_cast<std::size_t>(requested.groups * requested.batch);
  const std::size_t a_one = kernels::gemm_a_elements(spec);
  const std::size_t b_one = kernels::gemm_b_elements(spec);
  const std::size_t c_one = kernels::gemm_c_elements(spec);
  const std::size_t a_size = kernels::element_size(spec.a);
  const std::size_t b_size = kernels::element_size(spec.b);
  // An FP8 fallback may write FP32 (validation/fp8_gemm_configurations.h): room for 4 bytes.
  const std::size_t c_room = fp8 ? 4 : kernels::element_size(spec.c);
  const std::size_t bytes = products * (a_one * a_size + b_one * b_size + c_one * c_room);
  if (bytes > session.free_memory() * 8 / 10) {
    session.skip("gemm", name, "operands need " + std::to_string(bytes >> 20) + " MiB, more than free device memory");
    return;
  }
  kernels::DeviceBuffer a(products * a_one * a_size);
  kernels::DeviceBuffer b(products * b_one * b_size);
  kernels::DeviceBuffer c(products * c_one * c_room);
  const float scale = requested.precision == DataType::int8 ? 8.0f : 1.0f;  // int8: integers in [-8, 8]
  kernels::fill_uniform(stream, a.get(), spec.a, products * a_one, 1, scale);
  kernels::fill_uniform(stream, b.get(), spec.b, products * b_one, 2, scale);
  STEPCAST_CUDA(cudaStreamSynchronize(stream));
  const auto groups = static_cast<std::size_t>(requested.groups);
  const auto batch = static_cast<std::size_t>(requested.batch);

  std::unique_ptr<kernels::GemmPlan> plan;
  const auto work = [&] {
    const std::size_t c_size = kernels::element_size(spec.c);
    for (std::size_t g = 0; g < groups; ++g) {
      plan->run(stream, a.as<unsigned char>() + g * batch * a_one * a_size, b.as<unsigned char>() + g * batch * b_one * b_size,
                c.as<unsigned char>() + g * batch * c_one * c_size, m_workspace.get());
    }
  };
  // One set-up for most formats; FP8 tries the documented list in order and keeps the first that
  // cuBLASLt both plans and runs, recording each refused one in `skipped` with cuBLASLt's reason.
  std::vector<Fp8GemmConfiguration> configurations =
      fp8 ? fp8_gemm_configurations(requested.c_type) : std::vector<Fp8GemmConfiguration>{};
  GemmInputs point = requested;
  std::string configuration_note;
  std::string last_refusal;
  const std::size_t attempts = fp8 ? configurations.size() : 1;
  for (std::size_t i = 0; i < attempts && !plan; ++i) {
    if (fp8) {
      const Fp8GemmConfiguration& cfg = configurations[i];
      spec.c = *kernels::parse_element_format(cfg.output);
      spec.fp8_scale_pointers = cfg.scale_pointers;
      spec.fp8_fast_accumulation = cfg.fast_accumulation;
      spec.fp8_c_is_d = cfg.c_is_d;
      point.c_type = cfg.output;
      configuration_note = "cuBLASLt FP8 set-up " + std::to_string(i + 1) + " of " + std::to_string(attempts) +
                           " tried: " + describe(cfg);
    }
    try {
      plan = std::make_unique<kernels::GemmPlan>(m_lt, spec, m_scales.as<float>(), m_scales.as<float>() + kScaleStride);
      STEPCAST_CUDA(cudaMemsetAsync(c.get(), 0, c.bytes(), stream));
      work();  // an untimed call: cuBLASLt refuses at run time what its heuristic offered
      STEPCAST_CUDA(cudaStreamSynchronize(stream));
    } catch (const kernels::GemmUnsupported& e) {
      plan.reset();
      last_refusal = e.what();
      if (fp8) session.skip("gemm", name + " [" + describe(configurations[i]) + "]", last_refusal);
    }
  }
  if (!plan) {
    session.skip("gemm", name,
                 fp8 ? "cuBLASLt refused every FP8 set-up tried (" + std::to_string(attempts) +
                           ", each listed in `skipped` with its reason)"
                     : last_refusal);
    return;
  }
  TimingResult cold;
  try {
    cold = session.timer().cold(work);
  } catch (const kernels::GemmUnsupported& e) {
    session.skip("gemm", name, e.what());
    return;
  }

  // Sampled C elements of the first and the last product against the stored operands.
  Comparison cmp;
  const double tol = fp8 && spec.fp8_fast_accumulation ? kFp8FastAccumulationTolerance : tolerance(point.precision);
  const double magnitude = std::sqrt(static_cast<double>(point.k)) / 3.0 * scale * scale;
  const double atol = point.precision == DataType::int8 ? 0.5 : tol * magnitude;
  const auto k = static_cast<std::size_t>(point.k);
  const auto m = static_cast<std::size_t>(point.m);
  const auto n = static_cast<std::size_t>(point.n);
  for (std::size_t p : {std::size_t{0}, products - 1}) {
    for (std::int64_t i : sample_indices(point.m, kCheckedRows)) {
      const auto row = static_cast<std::size_t>(i);
      const auto a_row = spec.transpose_a ? fetch(a.get(), spec.a, p * a_one + row * k, k, 1)
                                          : fetch(a.get(), spec.a, p * a_one + row, k, m);
      for (std::int64_t j : sample_indices(point.n, kCheckedCols)) {
        const auto col = static_cast<std::size_t>(j);
        const auto b_col = spec.transpose_b ? fetch(b.get(), spec.b, p * b_one + col, k, n)
                                            : fetch(b.get(), spec.b, p * b_one + col * k, k, 1);
        const float got = fetch(c.get(), spec.c, p * c_one + row + col * m, 1)[0];
        cmp.add(got, dot(a_row, b_col), atol, tol);
      }
    }
    if (products == 1) break;
  }
  const CheckInfo check = to_check(cmp, "sampled C elements against double-precision dot products of A and B", tol);
  const auto annotate = [&](Measurement& measured) {
    measured.name = label + measured.name;
    measured.notes.push_back("cuBLASLt heuristic's algorithm " + std::to_string(plan->algorithm_used() + 1) + " of " +
                             std::to_string(plan->algorithms_offered()) + ", workspace " +
                             std::to_string(plan->workspace_bytes()) + " B");
    if (fp8) measured.notes.push_back(configuration_note);
    if (groups > 1) measured.notes.push_back("grouped: a loop of per-expert cuBLASLt calls on one stream");
    measured.algorithm = algorithm_record(*plan, measured.notes);
  };
  Measurement measured = make_measurement(point, cold, check, session.device());
  annotate(measured);
  const double per_call = measured.time.median_s / static_cast<double>(groups);
  session.record(std::move(measured));
  if (per_call < kHotBelowSeconds) {
    const TimingResult hot = session.timer().hot(work, per_call * static_cast<double>(groups), static_cast<int>(groups));
    Measurement hot_measured = make_measurement(point, hot, check, session.device());
    annotate(hot_measured);
    session.record(std::move(hot_measured));
  }
}

void run_gemm_suite(Session& session) {
  std::printf("gemm\n");
  GemmRunner runner(session);
  for (const GemmInputs& point : gemm_grid(session.options())) {
    if (session.out_of_time()) return;
    runner.measure(point, "");
  }
}

}  // namespace stepcast::harness
