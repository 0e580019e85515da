#include "validation/collective_points.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string_view>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "model/placement.h"
#include "model/topology.h"
#include "simulator/diagnostics.h"

namespace stepcast {

namespace {

std::string point_label(CollectiveOp op, double bytes, int ranks) {
  return fmt::format("{} {:.0f} B, {} ranks", to_string(op), bytes, ranks);
}

// NCCL's names (ncclAlgoStr, ncclProtoStr in src/include/nccl_common.h), compared as NCCL's
// parseList does: case-insensitive, comma-separated, a leading '^' excludes the listed ones.
constexpr std::array<std::pair<std::string_view, CollectiveAlgorithm>, 7> kAlgorithmNames{{
    {"tree", CollectiveAlgorithm::tree},
    {"ring", CollectiveAlgorithm::ring},
    {"collnetdirect", CollectiveAlgorithm::collnet_direct},
    {"collnetchain", CollectiveAlgorithm::collnet_chain},
    {"nvls", CollectiveAlgorithm::nvls},
    {"nvlstree", CollectiveAlgorithm::nvls_tree},
    {"pat", CollectiveAlgorithm::pat},
}};
constexpr std::array<std::pair<std::string_view, CollectiveProtocol>, 3> kProtocolNames{{
    {"ll", CollectiveProtocol::ll},
    {"ll128", CollectiveProtocol::ll128},
    {"simple", CollectiveProtocol::simple},
}};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

// The allowed-set bit mask of an NCCL_ALGO / NCCL_PROTO value.
template <class Enum, std::size_t N>
unsigned parse_nccl_list(const std::array<std::pair<std::string_view, Enum>, N>& names, const std::string& key,
                         std::string_view value, const std::string& source) {
  const std::string_view original = value;
  const bool exclude = value.starts_with('^');
  if (exclude) value.remove_prefix(1);
  unsigned listed = 0;
  while (!value.empty()) {
    const auto comma = value.find(',');
    const std::string token = lower(value.substr(0, comma));
    value = comma == std::string_view::npos ? std::string_view{} : value.substr(comma + 1);
    if (token.empty()) continue;
    const auto it = std::find_if(names.begin(), names.end(), [&](const auto& n) { return n.first == token; });
    if (it == names.end()) {
      throw InputError(fmt::format("{}: {}={} names '{}', which is not one of NCCL's", source, key, original, token));
    }
    listed |= 1u << static_cast<unsigned>(it->second);
  }
  return exclude ? ~listed : listed;
}

int parse_channel_count(const std::string& key, const std::string& value, const std::string& source) {
  int n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc{} || end != value.data() + value.size() || n < 1) {
    throw InputError(fmt::format("{}: {}={} is not a channel count", source, key, value));
  }
  return n;
}

}  // namespace

AlgorithmFilter nccl_settings_filter(const std::map<std::string, std::string>& env, const std::string& source) {
  AlgorithmFilter f;
  const auto get = [&env](const char* key) -> const std::string* {
    const auto it = env.find(key);
    return it == env.end() ? nullptr : &it->second;
  };
  if (const auto* v = get("NCCL_ALGO")) f.algorithm_mask = parse_nccl_list(kAlgorithmNames, "NCCL_ALGO", *v, source);
  if (const auto* v = get("NCCL_PROTO")) f.protocol_mask = parse_nccl_list(kProtocolNames, "NCCL_PROTO", *v, source);
  // NCCL_MIN_CTAS / NCCL_MAX_CTAS (the communicator config's minCTAs / maxCTAs) and the older
  // NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS bound the same count (connect.cc ncclTopoPostset
  // takes the larger minimum and the smaller maximum).
  for (const char* key : {"NCCL_MIN_CTAS", "NCCL_MIN_NCHANNELS"}) {
    if (const auto* v = get(key)) f.min_channels = std::max(f.min_channels, parse_channel_count(key, *v, source));
  }
  for (const char* key : {"NCCL_MAX_CTAS", "NCCL_MAX_NCHANNELS"}) {
    if (const auto* v = get(key)) {
      const int n = parse_channel_count(key, *v, source);
      f.max_channels = f.max_channels > 0 ? std::min(f.max_channels, n) : n;
    }
  }
  return f;
}

GroupLayout collective_group(SystemSpec& system, int ranks, int ranks_per_node, const std::string& source) {
  const int server = std::max(system.gpus_per_node, 1);
  const int per_node = ranks_per_node > 0 ? std::min(ranks_per_node, ranks) : std::min(server, ranks);
  if (per_node > server) {
    throw InputError(fmt::format("{}: {} ranks per node, but a {} node has {} GPUs", source, per_node, system.name,
                                 server));
  }
  const int nodes = (ranks + per_node - 1) / per_node;
  if (nodes * per_node != ranks) {
    throw InputError(fmt::format("{}: {} ranks do not fill nodes of {} GPUs evenly (give --ranks-per-node)", source,
                                 ranks, per_node));
  }
  system.gpus = nodes * server;
  const bool crosses = nodes * server > std::max(system.nvlink_domain_gpus, server);
  if (crosses && (system.network.nics_per_node <= 0 || system.network.nic_bandwidth.value() <= 0.0)) {
    throw InputError(fmt::format("{}: {} ranks span {} nodes, but system '{}' has no known network bandwidth", source,
                                 ranks, nodes, system.name));
  }
  std::vector<int> members;
  for (int s = 0; s < nodes; ++s) {
    for (int i = 0; i < per_node; ++i) members.push_back(s * server + i);
  }
  return layout_of(members, system);
}

CollectiveDataset collective_dataset(const NcclTestsLog& log, const SystemSpec& system, int ranks_per_node,
                                     int ranks) {
  if (!log.op) {
    throw InputError(log.source + ": cannot tell which collective this nccl-tests log measured "
                                  "(no *_perf command or header); stepcast models all_reduce, all_gather, "
                                  "reduce_scatter, broadcast, reduce, alltoall and sendrecv");
  }
  const CollectiveOp op = *log.op;
  // Ranks: the device list when printed; else the bus factor of the row with the largest
  // bandwidth (the most printed digits: 0.01 / 0.01 at 1 KiB would say 2 ranks).
  int implied = 0;
  double largest = 0.0;
  for (const auto& row : log.rows) {
    if (row.out_of_place.algbw_gbps > largest) {
      largest = row.out_of_place.algbw_gbps;
      implied = ranks_implied_by_bus_factor(op, row.out_of_place);
    }
  }
  int n = log.ranks > 0 ? log.ranks : implied;
  if (ranks > 0) {
    if (log.ranks > 0 && log.ranks != ranks) {
      throw InputError(fmt::format("{}: --ranks {} disagrees with the log's device list ({} ranks)", log.source, ranks,
                                   log.ranks));
    }
    // The printed busbw/algbw ratio (4-5 digits at the largest size) must match the bus factor
    // of `ranks` within 0.5%; rank counts themselves are ill-conditioned at large n.
    for (const auto& row : log.rows) {
      if (row.out_of_place.algbw_gbps != largest || implied == 0) continue;
      const double ratio = row.out_of_place.busbw_gbps / row.out_of_place.algbw_gbps;
      if (std::fabs(ratio / bus_bandwidth_factor(op, ranks) - 1.0) > 0.005) {
        throw InputError(fmt::format("{}: --ranks {} disagrees with the log's busbw/algbw ratio {:.4f} (about {} ranks)",
                                     log.source, ranks, ratio, implied));
      }
    }
    n = ranks;
  }
  if (n < 2) {
    throw InputError(log.source + ": cannot tell how many ranks ran (no device list, and the bus factor does not "
                                  "determine it); give --ranks N");
  }
  CollectiveDataset d;
  d.source = log.source;
  d.system = system;
  // A run with NVLS switched off ran without it, whatever the system offers.
  if (const auto it = log.nccl_env.find("NCCL_NVLS_ENABLE"); it != log.nccl_env.end() && it->second == "0") {
    d.system.nvlink_sharp = false;
  }
  // NCCL_ALGO / NCCL_PROTO / NCCL_MIN_CTAS ...: price what the run ran.
  d.filter = nccl_settings_filter(log.nccl_env, log.source);
  const GroupLayout group = collective_group(d.system, n, ranks_per_node, log.source);
  d.fabric = derive_fabric_figures(d.system);
  std::vector<Diagnostic> failed;
  for (const auto& row : log.rows) {
    const bool wrong = (row.out_of_place.wrong && *row.out_of_place.wrong > 0.0) ||
                       (row.in_place && row.in_place->wrong && *row.in_place->wrong > 0.0);
    if (wrong) {
      failed.push_back(Diagnostic{log.source, row.line, 0, "",
                                  "this row failed nccl-tests' result check (#wrong > 0): a failed measurement "
                                  "cannot be fitted",
                                  ""});
      continue;
    }
    CollectivePoint p;
    p.op = op;
    p.bytes = row.size.value();
    p.group = group;
    const Seconds t = row.in_place ? min(row.out_of_place.time, row.in_place->time) : row.out_of_place.time;
    p.measured_s = t.value();
    p.gpus_per_thread = std::max(log.gpus_per_thread, 1);
    p.label = point_label(op, p.bytes, n);
    if (!(p.measured_s > 0.0) || !(p.bytes > 0.0)) continue;  // 0-byte rows carry no information
    d.points.push_back(std::move(p));
  }
  if (!failed.empty()) throw InputError(std::move(failed));
  return d;
}

CollectiveDataset collective_dataset(const MeasurementFile& file, const std::string& source,
                                     const SystemSpec& system) {
  CollectiveDataset d;
  d.source = source;
  d.system = system;
  bool sized = false;
  for (std::size_t i = 0; i < file.records.size(); ++i) {
    const Measurement& r = file.records[i];
    const auto* c = std::get_if<CollectiveInputs>(&r.inputs);
    if (c == nullptr) continue;
    if (!r.check.passed) {
      throw InputError(fmt::format("{}: records[{}] ({}) failed its result check ({}): a failed measurement "
                                   "cannot be fitted",
                                   source, i, r.name, r.check.method));
    }
    SystemSpec sized_system = system;
    CollectivePoint p;
    p.op = c->op;
    p.bytes = static_cast<double>(c->size_bytes);
    p.group = collective_group(sized_system, c->ranks, c->ranks_per_node, source);
    if (!sized || sized_system.gpus > d.system.gpus) {
      d.system = sized_system;
      sized = true;
    }
    p.measured_s = r.time.median_s;
    p.label = point_label(p.op, p.bytes, c->ranks);
    d.points.push_back(std::move(p));
  }
  d.fabric = derive_fabric_figures(d.system);
  return d;
}

CollectiveEstimate predict_collective(const CollectivePoint& point, const NcclCollectiveModel& model,
                                      const AlgorithmFilter& filter, const NcclTestsHarness& harness) {
  CollectiveEstimate e = model.estimate(point.op, Bytes(point.bytes), point.group, filter);
  e.time += units::microseconds(harness.launch_us_per_extra_gpu * std::max(point.gpus_per_thread - 1, 0));
  return e;
}

}  // namespace stepcast
