#include "validation/measurement_records.h"

#include <unistd.h>

#include <array>
#include <ctime>
#include <stdexcept>

#include "validation/harness_grids.h"
#include "validation/statistics.h"
#include "validation/work_counts.h"

namespace stepcast {

TimeStats time_stats(const std::vector<double>& samples) {
  const SampleSummary s = summarize(samples);
  TimeStats t;
  t.median_s = s.median;
  t.min_s = s.min;
  t.max_s = s.max;
  t.mean_s = s.mean;
  t.p10_s = s.p10;
  t.p90_s = s.p90;
  t.rel_stdev = s.rel_stdev;
  t.samples = static_cast<std::int64_t>(s.count);
  return t;
}

Measurement make_measurement(MeasurementInputs inputs, const TimingResult& timing, CheckInfo check, int device) {
  if (timing.samples.empty()) throw std::invalid_argument("make_measurement: no samples");
  Measurement m;
  m.name = point_name(inputs);
  m.device = device;
  if (const auto* g = std::get_if<GemmInputs>(&inputs)) {
    m.flops = gemm_flops(*g);
    m.bytes = gemm_bytes(*g);
  } else if (const auto* a = std::get_if<AttentionInputs>(&inputs)) {
    m.flops = attention_flops(*a);
    m.bytes = attention_bytes(*a);
  } else if (const auto* e = std::get_if<ElementwiseInputs>(&inputs)) {
    m.bytes = elementwise_bytes(*e);
  } else if (const auto* mem = std::get_if<MemoryInputs>(&inputs)) {
    m.bytes = memory_bytes(*mem);
  } else if (const auto* c = std::get_if<CollectiveInputs>(&inputs)) {
    m.bytes = Bytes(static_cast<double>(c->size_bytes));
  }
  m.inputs = std::move(inputs);
  m.time = time_stats(timing.samples);
  m.method.mode = timing.mode;
  m.method.batch = timing.batch;
  m.method.stop_reason = timing.stop_reason;
  m.method.wall_s = timing.wall_s;
  m.method.throttled_discarded = timing.throttled_discarded;
  m.method.sm_clock_mhz = timing.sm_clock_mhz;
  m.check = std::move(check);
  return m;
}

std::string utc_timestamp_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text.data();
}

Provenance host_provenance(const HarnessOptions& options, const std::string& tool_version, const std::string& git_sha) {
  Provenance p;
  p.tool_version = tool_version;
  p.git_sha = git_sha;
  p.argv = options.argv;
  p.command = options.command;
  p.started_utc = utc_timestamp_now();
  p.finished_utc = p.started_utc;
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) == 0) p.host = host.data();
  p.method.l2_flush = options.l2_flush;
  p.method.stopping = options.stopping;
  p.method.throttle_threshold = options.throttle.threshold;
  p.method.throttle_recovery_delay_s = options.throttle.recovery_delay.value();
  return p;
}

}  // namespace stepcast
