#pragma once
// Sweep files: a base scenario, axes over its keys, constraints and objectives (schema_version 1).
//
//   schema_version: 1
//   name: gpt3-layouts                  # optional; default: the file name
//   base: gpt3-175b-selene              # a catalog scenario, a scenario file (relative to this
//                                       # file), or an inline scenario mapping
//   axes:                               # the grid is the product of the axes, first axis slowest
//     parallel.tp: [4, 8]               # a list of values, each applied like --set key=value
//     parallel.pp: auto                 # every valid value (see below)
//     training.micro_batch: {from: 1, to: 8, factor: 2}       # 1, 2, 4, 8
//     training.seq_len: {from: 2048, to: 8192, step: 2048}    # 2048, 4096, 6144, 8192
//     system.network.nic_bandwidth: {from: "100 Gb/s", to: "400 Gb/s", factor: 2}
//   constraints:                        # expressions (simulator/expression.h) that must hold
//     - memory_per_gpu_bytes.peak <= 70 GiB
//     - parallel.tp <= 8
//   objectives:                         # "min EXPR" or "max EXPR" (default: min step_time_s)
//     - min step_time_s
//     - max tokens_per_s
//   gpu_hour_usd: 2.50                  # price of one GPU-hour, for cost_per_million_tokens_usd
//
// Every axis value is applied to the base exactly as `--set key=value` would be, and validated
// once when the file is loaded: a value that cannot be read (an unknown key, a bad word, a number
// where a mapping belongs) is an error naming the sweep file's line and column. Combinations that
// are inconsistent (tp*pp*dp*cp != gpus, heads % tp != 0, ...) are not errors: such points are
// skipped and counted. `parallel.dp` follows gpus/(tp*pp*cp) at every point unless an axis sets it;
// a dp written in the base is dropped when an axis changes tp, pp, cp or system.gpus.
//
// `auto` takes every value valid for the base scenario: parallel.tp the divisors of gpus that
// divide the heads (and fit the KV heads), pp the divisors of gpus up to the layers, dp and cp the
// divisors of gpus (cp: 2*cp divides seq_len), ep the divisors of the experts, expert_tp the
// divisors of tp, vpp the divisors of layers/pp, training.micro_batch the divisors of
// global_batch, parallel.zero 0..3, true/false keys both, word keys every spelling, precision
// every training format the GPU supports.
//
// All errors of a file are reported at once (InputError), with file:line:column and key path.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/scenario.h"
#include "simulator/catalog.h"
#include "simulator/ranking.h"
#include "simulator/result_fields.h"
#include "simulator/scenario_loader.h"
#include "simulator/yaml_reader.h"

namespace stepcast {

struct SweepAxis {
  std::string key;                  // scenario key path, e.g. "parallel.tp"
  std::vector<std::string> values;  // each the YAML text of a --set value ("8", "true", "{compute: fp8}")
  Location where;                   // the axis key in the sweep file
};

struct SweepConstraint {
  Expression expression;
  FieldPhase phase = FieldPhase::key;  // when it can first be checked
  Location where;
};

struct SweepFile {
  std::string source;        // the sweep file ("<input>" when parsed from text)
  std::string name;
  std::string base_source;   // where the base came from: its file, "<builtin>/...", or the sweep file
  std::string base_text;     // the base as a scenario document (dp removed when the axes derive it)
  bool base_dp_dropped = false;
  Scenario base;             // the base as loaded (before any axis)
  std::vector<SweepAxis> axes;
  std::vector<SweepConstraint> constraints;
  std::vector<Objective> objectives;  // at least one
  double gpu_hour_usd = 0.0;          // 0: no price
  std::uint64_t fingerprint = 0;      // of the file and its base: shards must agree on it

  // Product of the axes' sizes (1 without axes).
  [[nodiscard]] std::uint64_t point_count() const;
  // The value index of each axis at `point` (mixed radix, first axis slowest).
  void decode(std::uint64_t point, std::span<std::size_t> value_index) const;
  // The point as --set overrides on base_text.
  [[nodiscard]] std::vector<Override> overrides_of(std::uint64_t point) const;
};

SweepFile load_sweep_file(const std::string& path, const Catalog& catalog = Catalog::builtin());
// `source` labels diagnostics and anchors a relative base path.
SweepFile parse_sweep(std::string_view text, const std::string& source, const Catalog& catalog = Catalog::builtin());

// 64-bit FNV-1a, for fingerprints.
std::uint64_t fnv1a(std::string_view text, std::uint64_t seed = 14695981039346656037ULL);

}  // namespace stepcast
