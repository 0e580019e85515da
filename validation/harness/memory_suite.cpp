// Memory suite: effective HBM bandwidth from STREAM-style copy and triad kernels and from
// cudaMemcpyAsync device to device, over sizes from L2-resident-ish to GiBs. Arrays that do not
// fit in a third of the free memory are skipped.

#include <cmath>
#include <cstdio>

#include "kernels/cuda_check.h"
#include "kernels/device_buffer.h"
#include "kernels/memory_ops.h"
#include "validation/harness/check_helpers.h"
#include "validation/harness/device_data.h"
#include "validation/harness/suites.h"
#include "validation/harness_grids.h"
#include "validation/measurement_records.h"

namespace stepcast::harness {

namespace {

constexpr float kTriadScalar = 3.0f;
constexpr int kCheckedElements = 4096;

}  // namespace

void measure_memory(Session& session, const MemoryInputs& point, const std::string& label) {
  const cudaStream_t stream = session.stream();
  {
    const std::string name = label + point_name(point);
    const auto n = static_cast<std::size_t>(point.elements);
    const std::size_t bytes = n * sizeof(float);
    if (3 * bytes > session.free_memory()) {
      session.skip("memory", name, "three arrays of this size do not fit in free device memory");
      return;
    }
    kernels::DeviceBuffer a(bytes);
    kernels::DeviceBuffer b(bytes);
    kernels::DeviceBuffer c(bytes);
    kernels::fill_uniform(stream, b.get(), kernels::ElementFormat::fp32, n, 11, 1.0f);
    kernels::fill_uniform(stream, c.get(), kernels::ElementFormat::fp32, n, 12, 1.0f);
    STEPCAST_CUDA(cudaStreamSynchronize(stream));
    TimingResult t;
    if (point.op == "copy") {
      t = session.timer().cold([&] { kernels::launch_copy(stream, b.as<float>(), a.as<float>(), n); });
    } else if (point.op == "triad") {
      t = session.timer().cold(
          [&] { kernels::launch_triad(stream, a.as<float>(), b.as<float>(), c.as<float>(), kTriadScalar, n); });
    } else {
      t = session.timer().cold(
          [&] { STEPCAST_CUDA(cudaMemcpyAsync(a.get(), b.get(), bytes, cudaMemcpyDeviceToDevice, stream)); });
    }
    // Check elements spread over the output: copy reproduces b exactly; triad is b + s c in fp32
    // (the compiler may fuse the multiply-add, hence a relative tolerance of a few ulp).
    const std::size_t stride = std::max<std::size_t>(1, n / kCheckedElements);
    const std::size_t count = std::min<std::size_t>(n, kCheckedElements);
    const auto out = fetch(a.get(), kernels::ElementFormat::fp32, 0, count, stride);
    const auto in_b = fetch(b.get(), kernels::ElementFormat::fp32, 0, count, stride);
    const auto in_c = fetch(c.get(), kernels::ElementFormat::fp32, 0, count, stride);
    Comparison cmp;
    // Inputs are O(1): an absolute 1e-6 covers an unfused multiply-add's two roundings.
    const double rtol = point.op == "triad" ? 1e-6 : 0.0;
    const double atol = point.op == "triad" ? 1e-6 : 0.0;
    for (std::size_t i = 0; i < count; ++i) {
      const double expected = point.op == "triad" ? static_cast<double>(in_b[i]) + kTriadScalar * static_cast<double>(in_c[i])
                                                  : static_cast<double>(in_b[i]);
      cmp.add(out[i], expected, atol, rtol);
    }
    Measurement m = make_measurement(point, t, to_check(cmp, std::to_string(count) + " elements against the inputs", rtol),
                                     session.device());
    m.name = label + m.name;
    session.record(std::move(m));
  }
}

void run_memory_suite(Session& session) {
  std::printf("memory\n");
  for (const MemoryInputs& point : memory_grid(session.options())) {
    if (session.out_of_time()) return;
    measure_memory(session, point, "");
  }
}

}  // namespace stepcast::harness
