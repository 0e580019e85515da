#include "simulator/collective_table.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "simulator/diagnostics.h"

namespace stepcast {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool per_rank_count(CollectiveOp op) {
  return op == CollectiveOp::all_gather || op == CollectiveOp::reduce_scatter || op == CollectiveOp::all_to_all;
}

std::string_view redop_of(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::all_reduce:
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::reduce: return "sum";
    default: return "none";
  }
}

int root_of(CollectiveOp op) { return op == CollectiveOp::broadcast || op == CollectiveOp::reduce ? 0 : -1; }

}  // namespace

std::vector<CollectiveRow> sweep_collective(const NcclCollectiveModel& model, const GroupLayout& group,
                                            const CollectiveSweep& sweep) {
  std::vector<CollectiveRow> rows;
  const double factor = std::max(sweep.step_factor, 1.0 + 1e-9);
  const double n = std::max(group.size, 1);
  for (double s = sweep.min_size.value(); s <= sweep.max_size.value() * (1.0 + 1e-12); s *= factor) {
    CollectiveRow row;
    row.size = Bytes(std::floor(s));
    row.count = static_cast<long long>(row.size.value() / 4.0 / (per_rank_count(sweep.op) ? n : 1.0));
    row.estimate = model.estimate(sweep.op, row.size, group, sweep.filter);
    if (row.estimate.valid && row.estimate.time.value() > 0.0) {
      row.algbw_gbps = row.size.value() / row.estimate.time.value() / 1e9;
      row.busbw_gbps = row.algbw_gbps * bus_bandwidth_factor(sweep.op, group.size);
    }
    rows.push_back(row);
    if (sweep.step_factor <= 1.0) break;
  }
  return rows;
}

std::string format_collective_table(const std::vector<CollectiveRow>& rows, const CollectiveSweep& sweep,
                                    const std::vector<std::string>& title) {
  std::string out;
  for (const auto& t : title) out += "# " + t + "\n";
  out += "#\n";
  out +=
      "#       size         count      type   redop    root     time   algbw   busbw  algorithm       protocol\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n";
  char line[256];
  for (const auto& r : rows) {
    if (!r.estimate.valid) {
      std::snprintf(line, sizeof line, "%12.0f  %12lld  %8s  %6s  %6d  %s\n", r.size.value(), r.count, "float",
                    std::string(redop_of(sweep.op)).c_str(), root_of(sweep.op),
                    "       -       -       -  (no algorithm/protocol of the filter applies)");
    } else {
      // nccl-tests' time format: more decimals for shorter times.
      const double us = r.estimate.time.value() * 1e6;
      char time[32];
      std::snprintf(time, sizeof time, us >= 10000.0 ? "%7.0f" : (us >= 100.0 ? "%7.1f" : "%7.2f"), us);
      std::snprintf(line, sizeof line, "%12.0f  %12lld  %8s  %6s  %6d  %s %7.2f %7.2f  %-14s  %s\n",
                    r.size.value(), r.count, "float", std::string(redop_of(sweep.op)).c_str(), root_of(sweep.op),
                    time, r.algbw_gbps, r.busbw_gbps,
                    std::string(to_string(r.estimate.algorithm)).c_str(),
                    std::string(to_string(r.estimate.protocol)).c_str());
    }
    out += line;
  }
  return out;
}

Bytes parse_size_argument(std::string_view text) {
  const std::string_view t = trim(text);
  std::size_t i = 0;
  while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.')) ++i;
  const std::string number(t.substr(0, i));
  std::string unit(trim(t.substr(i)));
  char* end = nullptr;
  const double value = number.empty() ? -1.0 : std::strtod(number.c_str(), &end);
  double scale = -1.0;
  if (unit.empty() || unit == "B") scale = 1.0;
  else if (unit == "K" || unit == "k" || unit == "KiB") scale = 1024.0;
  else if (unit == "M" || unit == "MiB") scale = 1024.0 * 1024.0;
  else if (unit == "G" || unit == "GiB") scale = 1024.0 * 1024.0 * 1024.0;
  else if (unit == "T" || unit == "TiB") scale = 1024.0 * 1024.0 * 1024.0 * 1024.0;
  else if (unit == "kB" || unit == "KB") scale = 1e3;
  else if (unit == "MB") scale = 1e6;
  else if (unit == "GB") scale = 1e9;
  if (number.empty() || end != number.c_str() + number.size() || scale < 0.0 || !(value > 0.0)) {
    throw UsageError("cannot read the size '" + std::string(text) +
                     "': write a positive byte count like 8, 8B, 128K, 64KiB, 1M, 8GiB (K, M, G as in nccl-tests are "
                     "powers of 1024; kB, MB, GB powers of 1000)");
  }
  return Bytes(std::round(value * scale));
}

std::pair<Bytes, Bytes> parse_size_range(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) {
    const Bytes b = parse_size_argument(text);
    return {b, b};
  }
  const Bytes lo = parse_size_argument(text.substr(0, colon));
  const Bytes hi = parse_size_argument(text.substr(colon + 1));
  if (hi < lo) throw UsageError("--sizes " + std::string(text) + ": the maximum is below the minimum");
  return {lo, hi};
}

CollectiveOp parse_collective_op(std::string_view text) {
  std::string t = lower(trim(text));
  if (t.size() > 5 && t.ends_with("_perf")) t.resize(t.size() - 5);
  if (t == "all_reduce" || t == "allreduce") return CollectiveOp::all_reduce;
  if (t == "all_gather" || t == "allgather") return CollectiveOp::all_gather;
  if (t == "reduce_scatter" || t == "reducescatter") return CollectiveOp::reduce_scatter;
  if (t == "broadcast") return CollectiveOp::broadcast;
  if (t == "reduce") return CollectiveOp::reduce;
  if (t == "all_to_all" || t == "alltoall") return CollectiveOp::all_to_all;
  if (t == "send_recv" || t == "sendrecv") return CollectiveOp::send_recv;
  const std::vector<std::string> ops{"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                     "reduce",     "all_to_all", "send_recv"};
  const std::string guess = closest_match(t, ops);
  throw UsageError("unknown --op '" + std::string(text) + "' (one of all_reduce, all_gather, reduce_scatter, broadcast, "
                   "reduce, all_to_all, send_recv)" + (guess.empty() ? "" : "; did you mean '" + guess + "'?"));
}

CollectiveAlgorithm parse_algorithm(std::string_view text) {
  const std::string t = lower(trim(text));
  for (std::size_t i = 0; i <= kAlgorithmCount; ++i) {
    const auto a = static_cast<CollectiveAlgorithm>(i);
    std::string name(to_string(a));
    if (t == name) return a;
    name.erase(std::remove(name.begin(), name.end(), '_'), name.end());
    if (t == name) return a;  // NCCL_ALGO spelling: nvlstree, collnetdirect
  }
  throw UsageError("unknown --algo '" + std::string(text) +
                   "' (one of ring, tree, nvls, nvls_tree, pat, collnet_direct, collnet_chain, p2p)");
}

CollectiveProtocol parse_protocol(std::string_view text) {
  const std::string t = lower(trim(text));
  if (t == "ll") return CollectiveProtocol::ll;
  if (t == "ll128") return CollectiveProtocol::ll128;
  if (t == "simple") return CollectiveProtocol::simple;
  throw UsageError("unknown --proto '" + std::string(text) + "' (one of LL, LL128, Simple)");
}

}  // namespace stepcast
