// Elementwise suite: stepcast's fused kernels (kernels/fused_ops.h) over the grid, each checked
// on sampled rows against the CPU references of validation/reference_ops.h. Kernels shorter than
// 50 us are measured hot as well.

#include <cstdio>
#include <vector>

#include "kernels/cuda_check.h"
#include "kernels/device_buffer.h"
#include "kernels/fused_ops.h"
#include "kernels/memory_ops.h"
#include "validation/harness/check_helpers.h"
#include "validation/harness/device_data.h"
#include "validation/harness/suites.h"
#include "validation/harness_grids.h"
#include "validation/measurement_records.h"

namespace stepcast::harness {

namespace {

constexpr double kHotBelowSeconds = 50e-6;
constexpr int kCheckedRows = 8;
constexpr float kNormEps = 1e-5f;
// Llama 3 uses rotary base 500000 (Meta, Llama 3 model card / params.json rope_theta).
constexpr float kRopeTheta = 500000.0f;
constexpr int kRopeHeadDim = 128;
constexpr std::int64_t kRopeSeqLen = 4096;
constexpr float kDropoutP = 0.1f;
constexpr std::uint64_t kDropoutSeed = 1234;

kernels::ElementFormat format_of(DataType t) {
  switch (t) {
    case DataType::fp32: return kernels::ElementFormat::fp32;
    case DataType::fp16: return kernels::ElementFormat::fp16;
    default: return kernels::ElementFormat::bf16;
  }
}

// Outputs are rounded once to the storage format: bf16 keeps 8 significant bits (0.4% ulp),
// fp16 11; fp32 differs from the double reference by fast-math intrinsics only.
double relative_tolerance(DataType t) {
  switch (t) {
    case DataType::fp32: return 1e-4;
    case DataType::fp16: return 5e-3;
    default: return 1e-2;
  }
}

}  // namespace

void measure_elementwise(Session& session, const ElementwiseInputs& point, const std::string& label) {
  const cudaStream_t stream = session.stream();
  {
    const std::string name = label + point_name(point);
    const kernels::ElementFormat f = format_of(point.dtype);
    const std::size_t es = kernels::element_size(f);
    const auto rows = static_cast<std::size_t>(point.rows);
    const auto cols = static_cast<std::size_t>(point.cols);
    const std::size_t in_cols = point.op == "swiglu" ? 2 * cols : cols;
    if (3 * rows * in_cols * es > session.free_memory()) {
      session.skip("elementwise", name, "does not fit in free device memory");
      return;
    }
    kernels::DeviceBuffer x(rows * in_cols * es);
    kernels::DeviceBuffer residual(point.op == "bias_dropout_add" ? rows * cols * es : 0);
    kernels::DeviceBuffer y(rows * cols * es);
    kernels::DeviceBuffer gamma(cols * es);
    kernels::DeviceBuffer beta(cols * es);
    const float x_scale = point.op == "softmax" ? 4.0f : point.op == "gelu" ? 3.0f : 1.0f;
    kernels::fill_uniform(stream, x.get(), f, rows * in_cols, 21, x_scale);
    kernels::fill_uniform(stream, gamma.get(), f, cols, 22, 1.0f);
    kernels::fill_uniform(stream, beta.get(), f, cols, 23, 1.0f);
    if (residual.bytes() > 0) kernels::fill_uniform(stream, residual.get(), f, rows * cols, 24, 1.0f);
    STEPCAST_CUDA(cudaStreamSynchronize(stream));
    const kernels::RowShape shape{point.rows, point.cols};
    std::function<void()> work;
    if (point.op == "rmsnorm") {
      work = [&] { kernels::launch_rmsnorm(stream, f, shape, x.get(), gamma.get(), kNormEps, y.get()); };
    } else if (point.op == "layernorm") {
      work = [&] { kernels::launch_layernorm(stream, f, shape, x.get(), gamma.get(), beta.get(), kNormEps, y.get()); };
    } else if (point.op == "softmax") {
      work = [&] { kernels::launch_softmax(stream, f, shape, x.get(), y.get()); };
    } else if (point.op == "swiglu") {
      work = [&] { kernels::launch_swiglu(stream, f, shape, x.get(), y.get()); };
    } else if (point.op == "gelu") {
      work = [&] { kernels::launch_gelu(stream, f, shape, x.get(), y.get()); };
    } else if (point.op == "rope") {
      work = [&] { kernels::launch_rope(stream, f, shape, kRopeHeadDim, kRopeSeqLen, kRopeTheta, x.get(), y.get()); };
    } else {
      work = [&] {
        kernels::launch_bias_dropout_add(stream, f, shape, x.get(), gamma.get(), residual.get(), kDropoutSeed, kDropoutP,
                                         y.get());
      };
    }
    const TimingResult cold = session.timer().cold(work);

    Comparison cmp;
    const double rtol = relative_tolerance(point.dtype);
    // Absolute floor at the scale of the outputs: softmax outputs average 1 / cols.
    const double atol = point.op == "softmax" ? rtol / static_cast<double>(cols) : (point.op == "rope" && f == kernels::ElementFormat::fp32 ? 1e-3 : rtol);
    const auto g = fetch(gamma.get(), f, 0, cols);
    const auto bt = fetch(beta.get(), f, 0, cols);
    std::vector<double> expected(cols);
    for (std::int64_t r : sample_indices(point.rows, kCheckedRows)) {
      const auto row = static_cast<std::size_t>(r);
      const auto in = fetch(x.get(), f, row * in_cols, in_cols);
      const auto out = fetch(y.get(), f, row * cols, cols);
      if (point.op == "rmsnorm") {
        rmsnorm_reference(in, g, kNormEps, expected);
      } else if (point.op == "layernorm") {
        layernorm_reference(in, g, bt, kNormEps, expected);
      } else if (point.op == "softmax") {
        softmax_reference(in, expected);
      } else if (point.op == "swiglu") {
        swiglu_reference(in, expected);
      } else if (point.op == "gelu") {
        for (std::size_t c = 0; c < cols; ++c) expected[c] = gelu_reference(in[c]);
      } else if (point.op == "rope") {
        rope_reference(in, static_cast<std::int64_t>(row) % kRopeSeqLen, kRopeHeadDim, kRopeTheta, expected);
      } else {
        const auto res = fetch(residual.get(), f, row * cols, cols);
        bias_dropout_add_reference(in, g, res, kDropoutSeed, row * cols, kDropoutP, expected);
      }
      for (std::size_t c = 0; c < cols; ++c) cmp.add(out[c], expected[c], atol, rtol);
    }
    const CheckInfo check = to_check(cmp, std::to_string(kCheckedRows) + " sampled rows against the CPU reference", rtol);
    Measurement measured = make_measurement(point, cold, check, session.device());
    measured.name = label + measured.name;
    const double median = measured.time.median_s;
    session.record(std::move(measured));
    if (median < kHotBelowSeconds) {
      Measurement hot = make_measurement(point, session.timer().hot(work, median), check, session.device());
      hot.name = label + hot.name;
      session.record(std::move(hot));
    }
  }
}

void run_elementwise_suite(Session& session) {
  std::printf("elementwise\n");
  for (const ElementwiseInputs& point : elementwise_grid(session.options())) {
    if (session.out_of_time()) return;
    measure_elementwise(session, point, "");
  }
}

}  // namespace stepcast::harness
