#pragma once
// Builds the scenario of one sweep point.
//
// The point is, by definition, the base document with the point's axis values applied as --set
// overrides and loaded like a file. Loading a file costs hundreds of microseconds, so when every
// axis is a key with a plain value (parallel.*, training.seq_len/global_batch/micro_batch/kernels/
// attention_kernel, system.gpus, a one-word training precision) the builder takes a fast path: it copies the
// validated base once per thread, writes the axis values into the in-memory Scenario, re-derives
// parallel.dp and runs the loader's own cross-field checks (simulator/scenario_checks.h). Each
// axis value was already read once, by the loader, when the sweep file was loaded. Tests check that
// both paths give equal scenarios and the same verdicts (tests/unit/sweep_points_test.cpp).
//
// A builder holds per-thread state: use one per thread.

#include <cstdint>
#include <string>
#include <vector>

#include "model/scenario.h"
#include "simulator/sweep_file.h"

namespace stepcast {

// Writes an override into a training scenario in memory when its key is one the fast path handles
// (listed above) and its value is plain; returns false (the scenario unchanged) otherwise. The
// result still needs recheck_scenario() (simulator/scenario_checks.h).
bool apply_override_in_memory(Scenario& scenario, const Override& override_value);

class PointBuilder {
 public:
  PointBuilder(const SweepFile& sweep, const Catalog& catalog = Catalog::builtin());

  // Builds point `index`: the scenario (valid until the next call), or null when the point is
  // inconsistent, with the first reason in `reason` ("parallel.tp: model heads (96) are not
  // divisible by tp (5)").
  const Scenario* build(std::uint64_t index, std::string& reason);

  // Whether the fast path is in use (every axis key has an in-memory setter).
  [[nodiscard]] bool fast() const { return m_fast; }

  // The point as a scenario document: the base with the overrides applied, for tests and to show
  // a user exactly what a point was.
  [[nodiscard]] std::string point_document(std::uint64_t index) const;

  // Builds a point the slow way, by loading base + overrides (what the fast path must equal).
  bool build_by_loading(std::uint64_t index, Scenario& out, std::string& reason) const;

 private:
  struct FastAxis {
    int field = 0;              // which setter
    std::vector<long long> values;  // decoded per value: integer, 0/1, enum index or DataType index
  };
  bool build_fast(std::uint64_t index, std::string& reason);

  const SweepFile& m_sweep;
  const Catalog& m_catalog;
  bool m_fast = false;
  bool m_dp_given = false;
  std::vector<FastAxis> m_axes;
  std::vector<std::size_t> m_index;
  Scenario m_current;
};

}  // namespace stepcast
