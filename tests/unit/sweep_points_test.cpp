// Sweep files and their points: the in-memory fast path must give exactly what loading the point
// as a scenario file gives (simulator/sweep_points.h), valid or not.

#include <doctest/doctest.h>

#include <string>

#include "simulator/diagnostics.h"
#include "simulator/sweep_file.h"
#include "simulator/sweep_points.h"

using namespace stepcast;

namespace {

// Messages of every diagnostic loading `document` gives (empty when it loads).
std::vector<std::string> load_errors(const std::string& document, const std::string& source, Scenario& out) {
  try {
    out = parse_scenario(document, source);
  } catch (const InputError& e) {
    std::vector<std::string> messages;
    for (const auto& d : e.diagnostics()) messages.push_back((d.key_path.empty() ? "" : d.key_path + ": ") + d.message);
    return messages;
  }
  return {};
}

// Builds every point (or every `stride`-th) both ways and compares.
void check_fast_equals_file(const SweepFile& sweep, std::uint64_t stride, int& valid, int& invalid) {
  PointBuilder builder(sweep);
  REQUIRE(builder.fast());
  for (std::uint64_t i = 0; i < sweep.point_count(); i += stride) {
    CAPTURE(i);
    std::string reason;
    const Scenario* fast = builder.build(i, reason);
    const std::string document = builder.point_document(i);
    CAPTURE(document);
    Scenario loaded;
    const auto errors = load_errors(document, sweep.base_source, loaded);
    if (fast != nullptr) {
      CHECK(errors.empty());
      if (errors.empty()) CHECK(*fast == loaded);
      ++valid;
    } else {
      REQUIRE_FALSE(errors.empty());
      CHECK_MESSAGE(std::find(errors.begin(), errors.end(), reason) != errors.end(), "fast reason: " << reason);
      ++invalid;
    }
  }
}

}  // namespace

TEST_CASE("every sweep point built in memory equals the point loaded as a scenario file") {
  // A grid over GPT-3 175B's layout with many inconsistent points: tp that does not divide the
  // heads (5), pp that does not divide the layers (5, 64), vpp needing pp > 1, interleaving with
  // gpipe, micro-batches that do not divide the per-replica batch, and a GPU count that changes dp.
  const SweepFile sweep = parse_sweep(R"(
schema_version: 1
base: gpt3-175b-selene
axes:
  system.gpus: [512, 1024]
  parallel.tp: [4, 5, 8]
  parallel.pp: [1, 5, 8, 64]
  parallel.vpp: [1, 3]
  parallel.schedule: [1f1b, gpipe]
  training.micro_batch: {from: 1, to: 8, factor: 2}
  parallel.sequence_parallel: auto
  parallel.recompute: [selective, full]
  parallel.zero: [1, 3]
  precision: [bf16, fp8]
)",
                                      "<input>");
  CHECK(sweep.base_dp_dropped == false);  // gpt3-175b-selene derives dp already
  CHECK(sweep.point_count() == 2 * 3 * 4 * 2 * 2 * 4 * 2 * 2 * 2 * 2);
  int valid = 0;
  int invalid = 0;
  check_fast_equals_file(sweep, 7, valid, invalid);
  CHECK(valid > 20);
  CHECK(invalid > 20);
}

TEST_CASE("a base that fixes dp loses it when axes change tp, pp, cp or gpus; a dp axis keeps it") {
  const std::string base = R"(base:
  schema_version: 1
  model: llama3-8b
  system: {gpu: h100-sxm-80gb, gpus: 16}
  training: {seq_len: 4096, global_batch: 64}
  parallel: {tp: 2, pp: 2, dp: 4}
)";
  const SweepFile derived = parse_sweep("schema_version: 1\n" + base + "axes:\n  parallel.tp: [1, 2, 4, 8]\n", "<input>");
  CHECK(derived.base_dp_dropped);
  int valid = 0;
  int invalid = 0;
  check_fast_equals_file(derived, 1, valid, invalid);
  CHECK(valid == 4);  // dp = 16 / (tp * 2) each time

  const SweepFile fixed =
      parse_sweep("schema_version: 1\n" + base + "axes:\n  parallel.tp: [1, 2, 4]\n  parallel.dp: [2, 4]\n", "<input>");
  CHECK_FALSE(fixed.base_dp_dropped);
  valid = invalid = 0;
  check_fast_equals_file(fixed, 1, valid, invalid);
  CHECK(valid == 2);    // tp*pp*dp == 16: (2, 4) and (4, 2)
  CHECK(invalid == 4);
}

TEST_CASE("auto takes every valid value for the base; ranges step, multiply and keep units") {
  const SweepFile sweep = parse_sweep(R"(
schema_version: 1
base: gpt3-175b-selene
axes:
  parallel.tp: auto
  parallel.zero: auto
  training.global_batch: {from: 512, to: 2048, step: 512}
  system.network.nic_bandwidth: {from: "100 Gb/s", to: "400 Gb/s", factor: 2}
)",
                                      "<input>");
  // 1024 GPUs, 96 heads: the common divisors.
  CHECK(sweep.axes[0].values == std::vector<std::string>{"1", "2", "4", "8", "16", "32"});
  CHECK(sweep.axes[1].values == std::vector<std::string>{"0", "1", "2", "3"});
  CHECK(sweep.axes[2].values == std::vector<std::string>{"512", "1024", "1536", "2048"});
  // Quantities are written back in a unit of the same dimension: 100, 200, 400 Gb/s.
  CHECK(sweep.axes[3].values == std::vector<std::string>{"\"12.5 GB/s\"", "\"25 GB/s\"", "\"50 GB/s\""});
  // A key without an in-memory setter makes every point load as a file.
  PointBuilder builder(sweep);
  CHECK_FALSE(builder.fast());
  std::string reason;
  const Scenario* last = builder.build(sweep.point_count() - 1, reason);
  REQUIRE(last != nullptr);
  CHECK(last->parallel.tp == 32);
  CHECK(last->parallel.zero == 3);
  CHECK(last->training().global_batch == 2048);
  CHECK(last->system.network.nic_bandwidth.value() == doctest::Approx(50e9));
}

TEST_CASE("points are numbered with the first axis slowest") {
  const SweepFile sweep = parse_sweep(R"(
schema_version: 1
base: gpt3-175b-selene
axes:
  parallel.pp: [4, 8]
  training.micro_batch: [1, 2, 4]
)",
                                      "<input>");
  REQUIRE(sweep.point_count() == 6);
  const auto o = sweep.overrides_of(4);  // pp index 1, micro_batch index 1
  REQUIRE(o.size() == 2);
  CHECK(o[0].key_path == "parallel.pp");
  CHECK(o[0].value == "8");
  CHECK(o[1].value == "2");
  CHECK(sweep.objectives.size() == 1);
  CHECK(sweep.objectives.front().text() == "min step_time_s");
}

TEST_CASE("a recompute_modules axis builds the same points in memory as from a file, and refuses what the loader refuses") {
  // GPT-OSS 120B: [mla_up_proj] needs MLA and [layernorm, moe_act] needs selective, so some points
  // are invalid on both paths.
  const SweepFile sweep = parse_sweep(R"(
schema_version: 1
base:
  schema_version: 1
  model: gpt-oss-120b
  system: {gpu: h100-sxm-80gb, gpus: 64}
  training: {seq_len: 4096, global_batch: 512, micro_batch: 1}
  parallel: {pp: 4, ep: 8}
axes:
  parallel.recompute: [none, selective]
  parallel.recompute_modules: [[core_attn], [layernorm, moe_act], [moe], [mla_up_proj]]
)",
                                      "<input>");
  int valid = 0;
  int invalid = 0;
  check_fast_equals_file(sweep, 1, valid, invalid);
  CHECK(valid == 4);    // [core_attn] with either recompute; [layernorm, moe_act] and [moe] with selective
  CHECK(invalid == 4);  // the other two with none; [mla_up_proj] with both
}

TEST_CASE("an activation_offload_layers axis builds the same points in memory as from a file, and refuses what the loader refuses") {
  // Megatron-Core's checks (model/activation_offload.h): N < layers (80 for Llama 3 70B), pp 1, no
  // recompute; a point that breaks one must fail in memory with the loader's reason.
  const SweepFile sweep = parse_sweep(R"(
schema_version: 1
base: scenarios/examples/llama3-70b-activation-offload.yaml
axes:
  parallel.activation_offload_layers: [0, 20, 79, 80]
  parallel.recompute: [none, full]
  parallel.pp: [1, 2]
)",
                                      "<input>");
  int valid = 0;
  int invalid = 0;
  check_fast_equals_file(sweep, 1, valid, invalid);
  // Valid: N = 0, 20, 79 with pp 1 and no recompute (3); N = 0 with full recompute (1); N = 0 with
  // pp 2 (dp follows: 32), either recompute (2). The other 10 break one of the rules or N < 80.
  CHECK(valid == 6);
  CHECK(invalid == 10);
}
