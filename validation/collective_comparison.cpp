#include "validation/collective_comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace stepcast {

std::vector<CollectiveComparison> compare_with_log(const NcclTestsLog& log, CollectiveOp op, const GroupLayout& group,
                                                   const NcclCollectiveModel& model, int gpus_per_thread,
                                                   const NcclTestsHarness& harness) {
  std::vector<CollectiveComparison> out;
  const double factor = bus_bandwidth_factor(op, group.size);
  const Seconds launch = units::microseconds(harness.launch_us_per_extra_gpu * std::max(gpus_per_thread - 1, 0));
  for (const auto& row : log.rows) {
    const CollectiveEstimate e = model.estimate(op, row.size, group);
    CollectiveComparison c;
    c.size = row.size;
    c.measured_time = row.in_place ? min(row.out_of_place.time, row.in_place->time) : row.out_of_place.time;
    c.predicted_time = e.time + launch;
    c.measured_busbw_gbps = row.size.value() / c.measured_time.value() * factor / 1e9;
    c.predicted_busbw_gbps = row.size.value() / c.predicted_time.value() * factor / 1e9;
    c.algorithm = e.algorithm;
    c.protocol = e.protocol;
    out.push_back(c);
  }
  return out;
}

std::vector<ErrorBand> error_bands(const std::vector<CollectiveComparison>& points) {
  constexpr double KiB = 1024.0;
  constexpr double MiB = 1024.0 * 1024.0;
  std::vector<ErrorBand> bands{{"< 8 KiB", 0.0, 8 * KiB - 1},
                               {"8 KiB-1 MiB", 8 * KiB, MiB},
                               {"1-256 MiB", MiB + 1, 256 * MiB - 1},
                               {">= 256 MiB", 256 * MiB, 1e30}};
  for (auto& b : bands) {
    for (const auto& p : points) {
      const double s = p.size.value();
      if (s < b.min_bytes || s > b.max_bytes) continue;
      const double e = p.busbw_error();
      ++b.points;
      b.max_abs_error = std::max(b.max_abs_error, std::abs(e));
      b.mean_abs_error += std::abs(e);
      b.bias += e;
    }
    if (b.points > 0) {
      b.mean_abs_error /= b.points;
      b.bias /= b.points;
    }
  }
  return bands;
}

std::string format_comparison(const std::vector<CollectiveComparison>& points) {
  std::string out = "        size(B)  meas_us  pred_us  meas_busbw  pred_busbw   error  algorithm/protocol\n";
  char line[200];
  for (const auto& p : points) {
    std::snprintf(line, sizeof line, "%15.0f %8.1f %8.1f %11.2f %11.2f %6.1f%%  %s/%s\n", p.size.value(),
                  p.measured_time.value() * 1e6, p.predicted_time.value() * 1e6, p.measured_busbw_gbps,
                  p.predicted_busbw_gbps, p.busbw_error() * 100.0, std::string(to_string(p.algorithm)).c_str(),
                  std::string(to_string(p.protocol)).c_str());
    out += line;
  }
  return out;
}

}  // namespace stepcast
