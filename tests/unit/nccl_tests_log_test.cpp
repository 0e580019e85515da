#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "simulator/diagnostics.h"
#include "tests/support/reference_systems.h"
#include "validation/collective_points.h"
#include "validation/nccl_tests_log.h"

using namespace stepcast;

namespace {
const std::string kRef = "tests/fixtures/reference/nccl_logs/";
const std::string kExtra = "tests/fixtures/nccl_logs_extra/";

std::string error_of(std::string_view text) {
  try {
    parse_nccl_tests_log(text, "log.txt");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("every fixture log reads, with its op, ranks and rows") {
  struct Expect {
    std::string file;
    CollectiveOp op;
    int ranks;  // 0: the log lists no devices
    std::size_t rows;
  };
  const std::vector<Expect> expected{
      {kRef + "aws_p4de_2x8_allreduce.txt", CollectiveOp::all_reduce, 0, 29},
      {kRef + "aws_p5_2x8_allreduce.txt", CollectiveOp::all_reduce, 0, 32},
      {kRef + "a3mega_2x8_allreduce.txt", CollectiveOp::all_reduce, 16, 31},
      {kRef + "a3mega_2x8_allgather.txt", CollectiveOp::all_gather, 0, 11},
      {kRef + "cw_gb200_nvl72_1rack_allreduce.txt", CollectiveOp::all_reduce, 72, 5},
      {kRef + "cw_gb200_nvl72_2rack_allreduce.txt", CollectiveOp::all_reduce, 144, 6},
      {kRef + "cw_gb200_nvl72_20rack_allreduce.txt", CollectiveOp::all_reduce, 1440, 6},
      {kRef + "dranet_b200_2x8_allgather.txt", CollectiveOp::all_gather, 16, 24},
      {kRef + "mleng_a100_1x8_allreduce.txt", CollectiveOp::all_reduce, 0, 20},
      {kRef + "oke_a100_2x8_roce_allreduce.txt", CollectiveOp::all_reduce, 16, 2},
      {kRef + "yw_b200_a4_2x8_allreduce.txt", CollectiveOp::all_reduce, 16, 12},
      {kExtra + "thanos_a100_1x8_allreduce_mpirun.txt", CollectiveOp::all_reduce, 8, 30},
      {kExtra + "thanos_a100_1x8_allreduce_g8.txt", CollectiveOp::all_reduce, 8, 30},
      {kExtra + "dkh_a100_1x8_allreduce_g8.txt", CollectiveOp::all_reduce, 8, 25},
      {kExtra + "nccltests290_h100_1x8_allreduce_nvls.txt", CollectiveOp::all_reduce, 8, 6},
      {kExtra + "nccltests290_h100_2x8_allreduce_ring_degraded.txt", CollectiveOp::all_reduce, 0, 11},
  };
  for (const auto& e : expected) {
    INFO(e.file);
    const auto log = read_nccl_tests_log(e.file);
    REQUIRE(log.op.has_value());
    CHECK(*log.op == e.op);
    CHECK(log.ranks == e.ranks);
    CHECK(log.rows.size() == e.rows);
    CHECK_FALSE(log.metadata.at("source").empty());
  }
}

TEST_CASE("rank prefixes from srun are stripped and both result groups are read") {
  const auto log = read_nccl_tests_log(kRef + "aws_p5_2x8_allreduce.txt");
  const auto& last = log.rows.back();
  CHECK(last.size.value() == 17179869184.0);
  CHECK(last.count == 4294967296LL);
  CHECK(last.type == "float");
  CHECK(last.redop == "sum");
  CHECK(last.root == -1);
  CHECK(last.out_of_place.time.value() == doctest::Approx(66132e-6));
  CHECK(last.out_of_place.busbw_gbps == doctest::Approx(487.09));
  REQUIRE(last.in_place.has_value());
  CHECK(last.in_place->busbw_gbps == doctest::Approx(487.26));
  CHECK(last.out_of_place.wrong == 0.0);
  // busbw/algbw = 2(n-1)/n identifies 16 ranks.
  CHECK(ranks_implied_by_bus_factor(CollectiveOp::all_reduce, last.out_of_place) == 16);
}

TEST_CASE("validation off prints N/A, out-of-place-only tables have 8 columns") {
  const auto gather = read_nccl_tests_log(kRef + "a3mega_2x8_allgather.txt");
  CHECK_FALSE(gather.rows.front().out_of_place.wrong.has_value());
  CHECK(gather.rows.front().redop == "none");
  const auto yw = read_nccl_tests_log(kRef + "yw_b200_a4_2x8_allreduce.txt");
  CHECK_FALSE(yw.rows.front().in_place.has_value());
  CHECK(yw.gpus_per_thread == 1);
}

TEST_CASE("author-reduced tables with underscore sizes are read") {
  const auto log = read_nccl_tests_log(kRef + "mleng_a100_1x8_allreduce.txt");
  CHECK(log.reduced_table);
  CHECK(log.rows.front().size.value() == 32768.0);
  CHECK(log.rows.back().size.value() == 17179869184.0);
  CHECK(log.rows.back().out_of_place.busbw_gbps == doctest::Approx(234.89));
}

TEST_CASE("headers give the thread and GPU counts and the NCCL version") {
  const auto g8 = read_nccl_tests_log(kExtra + "dkh_a100_1x8_allreduce_g8.txt");
  CHECK(g8.threads == 1);
  CHECK(g8.gpus_per_thread == 8);
  CHECK(g8.nccl_version == "2.19.3");
  const auto dranet = read_nccl_tests_log(kRef + "dranet_b200_2x8_allgather.txt");
  CHECK(dranet.nccl_version == "2.26.6+cuda12.8");
}

TEST_CASE("NCCL settings are read from the fixture's env line and from NCCL_DEBUG lines") {
  // coreweave/nccl-tests' GB200 runs set NCCL_NVLS_ENABLE=0 (the fixture's `# env:` line).
  const auto cw = read_nccl_tests_log(kRef + "cw_gb200_nvl72_2rack_allreduce.txt");
  CHECK(cw.nccl_env.at("NCCL_NVLS_ENABLE") == "0");
  CHECK(cw.nccl_env.at("NCCL_COLLNET_ENABLE") == "0");
  // A log kept with NCCL_DEBUG=INFO says what the environment set.
  const auto debug = parse_nccl_tests_log(
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1\n"
      "node1:123:123 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 0.\n"
      "node1:123:123 [0] NCCL INFO NCCL_ALGO set by environment to Ring\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "           8             2     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n",
      "debug.txt");
  CHECK(debug.nccl_env.at("NCCL_NVLS_ENABLE") == "0");
  CHECK(debug.nccl_env.at("NCCL_ALGO") == "Ring");
  CHECK(read_nccl_tests_log(kRef + "aws_p5_2x8_allreduce.txt").nccl_env.count("NCCL_NVLS_ENABLE") == 0);
  // The dataset then runs on the system without NVLS, as the log did.
  const auto d = collective_dataset(cw, test::gb200_nvl72(2, true));
  CHECK_FALSE(d.system.nvlink_sharp);
  CHECK(collective_dataset(read_nccl_tests_log(kRef + "aws_p5_2x8_allreduce.txt"), test::aws_p5(2)).system.nvlink_sharp);
}

TEST_CASE("NCCL settings exported by the launch command are read; ones quoted in prose are not") {
  // nccl-tests#309's forced-ring run: `command: mpirun ... -x NCCL_ALGO=Ring -x NCCL_MIN_CTAS=24 ...`
  // (the fixture's env line says the same; the command alone must suffice).
  const auto ring = parse_nccl_tests_log(
      "# command: mpirun -np 16 -N 8 -x LD_LIBRARY_PATH -x NCCL_ALGO=Ring -x NCCL_MIN_CTAS=24 ./build/all_reduce_perf "
      "-b 1M -e 8G\n"
      "# ---- BEGIN RAW\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "     1048576        262144     float     sum      -1    156.9    6.68   12.53      0    154.1    6.81   12.76      0\n"
      "# ---- END RAW\n",
      "ring.txt");
  CHECK(ring.nccl_env.at("NCCL_ALGO") == "Ring");
  CHECK(ring.nccl_env.at("NCCL_MIN_CTAS") == "24");
  // A command inside the log, with settings before the launcher.
  const auto inline_command = parse_nccl_tests_log(
      "NCCL_PROTO=Simple NCCL_MAX_CTAS=8 mpirun -np 8 ./build/all_reduce_perf -b 8 -e 16\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "           8             2     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n",
      "inline.txt");
  CHECK(inline_command.nccl_env.at("NCCL_PROTO") == "Simple");
  CHECK(inline_command.nccl_env.at("NCCL_MAX_CTAS") == "8");
  // The 8-node default run's header quotes the later run's settings in brackets: not this run's.
  const auto quoted = read_nccl_tests_log(kExtra + "nccltests309_h100_8x8_allreduce.txt");
  CHECK(quoted.nccl_env.count("NCCL_MIN_CTAS") == 0);
  CHECK(read_nccl_tests_log(kExtra + "nccltests309_h100_2x8_allreduce.txt").nccl_env.count("NCCL_MIN_CTAS") == 0);
}

TEST_CASE("a log's NCCL_ALGO, NCCL_PROTO and channel bounds become the dataset's filter, as NCCL parses them") {
  const std::string src = "log.txt";
  // Case-insensitive single names, lists, and '^' exclusions (NCCL's parseList).
  const AlgorithmFilter ring = nccl_settings_filter({{"NCCL_ALGO", "RING"}}, src);
  CHECK(ring.allows(CollectiveAlgorithm::ring));
  CHECK_FALSE(ring.allows(CollectiveAlgorithm::tree));
  CHECK_FALSE(ring.allows(CollectiveAlgorithm::nvls_tree));
  const AlgorithmFilter no_nvls = nccl_settings_filter({{"NCCL_ALGO", "^NVLS,NVLSTree"}, {"NCCL_PROTO", "ll128,Simple"}}, src);
  CHECK(no_nvls.allows(CollectiveAlgorithm::ring));
  CHECK(no_nvls.allows(CollectiveAlgorithm::tree));
  CHECK_FALSE(no_nvls.allows(CollectiveAlgorithm::nvls));
  CHECK_FALSE(no_nvls.allows(CollectiveAlgorithm::nvls_tree));
  CHECK_FALSE(no_nvls.allows(CollectiveProtocol::ll));
  CHECK(no_nvls.allows(CollectiveProtocol::ll128));
  // Channel bounds: the larger minimum and the smaller maximum of the CTA and NCHANNELS names.
  const AlgorithmFilter ctas =
      nccl_settings_filter({{"NCCL_MIN_CTAS", "24"}, {"NCCL_MIN_NCHANNELS", "4"}, {"NCCL_MAX_CTAS", "32"},
                            {"NCCL_MAX_NCHANNELS", "28"}}, src);
  CHECK(ctas.min_channels == 24);
  CHECK(ctas.max_channels == 28);
  CHECK(nccl_settings_filter({}, src).min_channels == 0);
  // A name NCCL does not know is the user's error, not a silent default.
  CHECK_THROWS_WITH_AS(nccl_settings_filter({{"NCCL_ALGO", "Ring,Butterfly"}}, src), doctest::Contains("Butterfly"),
                       InputError);
  CHECK_THROWS_WITH_AS(nccl_settings_filter({{"NCCL_MIN_CTAS", "many"}}, src), doctest::Contains("NCCL_MIN_CTAS"),
                       InputError);
  // The fixtures of nccl-tests#309: the forced-ring pair is priced as a 24-channel ring.
  const auto d = collective_dataset(read_nccl_tests_log(kExtra + "nccltests309_h100_2x8_allreduce_ring_ctas24.txt"),
                                    test::dgx_h100(2));
  CHECK(d.filter.allows(CollectiveAlgorithm::ring));
  CHECK_FALSE(d.filter.allows(CollectiveAlgorithm::nvls_tree));
  CHECK(d.filter.min_channels == 24);
  const auto defaults =
      collective_dataset(read_nccl_tests_log(kExtra + "nccltests309_h100_4x8_allreduce.txt"), test::dgx_h100(4));
  CHECK(defaults.filter.allows(CollectiveAlgorithm::nvls_tree));
  CHECK(defaults.filter.min_channels == 0);
}

TEST_CASE("noise inside the table is skipped, not read as results") {
  // Open MPI help lines start with a number too.
  const auto log = read_nccl_tests_log(kExtra + "thanos_a100_1x8_allreduce_mpirun.txt");
  CHECK(log.rows.size() == 30);
  CHECK(log.rows.back().size.value() == 4294967296.0);
}

TEST_CASE("older tables without a root column and with an error column") {
  const std::string text =
      "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
      "#        (B)    (elements)                       (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
      "     1048576        262144     float     sum    100.0   10.49   19.66  2e-07    100.0   10.49   19.66  2e-07\n";
  const auto log = parse_nccl_tests_log(text, "old.txt");
  REQUIRE(log.rows.size() == 1);
  CHECK(log.rows[0].root == -1);
  CHECK(log.rows[0].out_of_place.wrong == doctest::Approx(2e-7));
}

TEST_CASE("a corrupt file is an error naming the line, not a silent skip") {
  const std::string header =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
      "#wrong\n";
  // A number that is not a number.
  CHECK(error_of(header +
                 "     1048576        262144     float     sum      -1    1x0.0   10.49   19.66      0    100.0   10.49  "
                 " 19.66      0\n")
            .find("log.txt:2") != std::string::npos);
  // A row cut short.
  CHECK(error_of(header + "     1048576        262144     float     sum      -1    100.0   10.49\n")
            .find("columns") != std::string::npos);
  // Columns shifted: algbw does not match size/time.
  CHECK(error_of(header +
                 "     1048576        262144     float     sum      -1    100.0   19.66   10.49      0    100.0   10.49  "
                 " 19.66      0\n")
            .find("does not match size/time") != std::string::npos);
  // Nothing at all.
  CHECK(error_of("just some text\n").find("no nccl-tests result rows") != std::string::npos);
  // Every bad row is reported at once.
  const std::string two_bad = error_of(header +
                                       "     1048576  262144  float  sum  -1  abc  10.49  19.66  0  100.0  10.49  19.66  0\n"
                                       "     2097152  524288  float  sum  -1  abc  10.49  19.66  0  100.0  10.49  19.66  0\n");
  CHECK(two_bad.find("log.txt:2") != std::string::npos);
  CHECK(two_bad.find("log.txt:3") != std::string::npos);
}

TEST_CASE("a summary table that is not nccl-tests output is refused") {
  CHECK_THROWS_AS(read_nccl_tests_log(kRef + "mleng_h200_b200_nvls_sweeps.txt"), InputError);
  CHECK_THROWS_AS(read_nccl_tests_log("tests/fixtures/does-not-exist.txt"), InputError);
}

TEST_CASE("op names map from nccl-tests binaries") {
  CHECK(collective_op_from_name("all_reduce_perf") == CollectiveOp::all_reduce);
  CHECK(collective_op_from_name("./build/alltoall_perf") == CollectiveOp::all_to_all);
  CHECK(collective_op_from_name("sendrecv_perf") == CollectiveOp::send_recv);
  CHECK_FALSE(collective_op_from_name("hypercube_perf").has_value());
}
