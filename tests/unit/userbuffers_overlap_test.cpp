// Transformer Engine's userbuffers TP overlap: the configs the recipes pass (Megatron-Bridge
// comm_overlap.py @0685ff5d, TE base.py initialize_ub's defaults) and what each method costs the
// GEMM it overlaps (simulator/userbuffers_overlap.h).
#include <doctest/doctest.h>

#include "model/op_time.h"
#include "simulator/userbuffers_overlap.h"

using namespace stepcast;

namespace {

// An H100 SXM as the catalog describes it: 132 SMs, 989 / 1979 TFLOP/s dense BF16 / FP8, 3.35 TB/s.
GpuSpec h100() {
  GpuSpec g;
  g.architecture = GpuArchitecture::hopper;
  g.sm_count = 132;
  g.dense_peak[index_of(DataType::bf16)] = FlopRate(989e12);
  g.dense_peak[index_of(DataType::fp8)] = FlopRate(1979e12);
  g.memory_bandwidth = Bandwidth(3.35e12);
  return g;
}

// A large compute-bound FP8 GEMM: Llama 3.1 405B's FC2 on one TP-8 rank, 4096 tokens.
Op big_gemm() {
  Op op;
  op.kind = OpKind::gemm;
  op.name = "fc2";
  op.dtype = DataType::fp8;
  op.gemm = {4096.0, 16384.0, 6656.0, 1.0};
  op.flops = Flops(2.0 * 4096.0 * 16384.0 * 6656.0);
  op.bytes = Bytes(4096.0 * 6656.0 + 6656.0 * 16384.0 + 4096.0 * 16384.0 * 2.0);
  return op;
}

}  // namespace

TEST_CASE("the userbuffers configs are the recipes' tables, TE's defaults elsewhere") {
  // comm_overlap.py userbuffers_fp8_h100_h16384_tp8_cp2_mbs1_seqlen8192.
  const UbLayerConfig l405 = userbuffers_config(GpuArchitecture::hopper, 16384, true);
  CHECK(l405.qkv_wgrad.method == UbMethod::bulk);
  CHECK(l405.qkv_wgrad.num_sm == 24);
  CHECK(l405.qkv_dgrad.num_sm == 2);
  CHECK(l405.proj_fprop.method == UbMethod::ring_exchange);
  CHECK(l405.proj_fprop.set_sm_margin);
  CHECK(l405.proj_fprop.num_sm == 1);
  // ..._bf16_h100_h16384...: proj_fprop pipeline 24 SMs, fc2_fprop 8, 4 splits, SM margin.
  const UbLayerConfig b405 = userbuffers_config(GpuArchitecture::hopper, 16384, false);
  CHECK(b405.proj_fprop.method == UbMethod::pipeline);
  CHECK(b405.proj_fprop.num_sm == 24);
  CHECK(b405.fc2_fprop.num_sm == 8);
  CHECK(b405.fc2_fprop.num_splits == 4);
  CHECK(b405.fc2_fprop.set_sm_margin);
  // ..._bf16_h100_h12288_tp4...: GPT-3 175B's fc2_fprop is a ring exchange.
  CHECK(userbuffers_config(GpuArchitecture::hopper, 12288, false).fc2_fprop.method == UbMethod::ring_exchange);
  // No table for 4096: TE's add_ub defaults, num_sm 16, 4 pipeline splits, no margin.
  const UbLayerConfig d = userbuffers_config(GpuArchitecture::hopper, 4096, false);
  CHECK(d.proj_fprop.method == UbMethod::pipeline);
  CHECK(d.proj_fprop.num_sm == 16);
  CHECK(d.proj_fprop.num_splits == 4);
  CHECK_FALSE(d.proj_fprop.set_sm_margin);
  CHECK(d.qkv_wgrad.method == UbMethod::bulk);
  CHECK(userbuffers_gemm_chunks(d.qkv_fprop, 8) == 8);
  CHECK(userbuffers_gemm_chunks(UbGemmConfig{UbMethod::ring_exchange, 1, 0, false, true}, 8) == 4);
  CHECK(userbuffers_gemm_chunks(d.proj_fprop, 8) == 4);
  CHECK(userbuffers_gemm_chunks(d.qkv_wgrad, 8) == 1);
}

TEST_CASE("set_sm_margin runs the GEMM on sm_count - num_sm SMs") {
  const GpuSpec gpu = h100();
  const CostParameters params;
  const Op op = big_gemm();
  const double full = op_time(op, gpu, params).value();
  // One split, 24 SMs kept for the comm kernel: about 132 / 108 of the time (wave quantization
  // on 108 SMs apart), whatever the collective's length.
  const UbGemmConfig margin{UbMethod::pipeline, 24, 1, true, false};
  const double t = userbuffers_overlap_gemm_time(op, Seconds(1.0), margin, 8, gpu, params).value();
  CHECK(t / full == doctest::Approx(132.0 / 108.0).epsilon(0.05));
  CHECK(t == doctest::Approx(userbuffers_overlap_gemm_time(op, Seconds(0.0), margin, 8, gpu, params).value()));
}

TEST_CASE("a comm kernel beside the GEMM slows it only while it runs") {
  const GpuSpec gpu = h100();
  const CostParameters params;
  const Op op = big_gemm();
  const double full = op_time(op, gpu, params).value();
  const UbGemmConfig bulk{UbMethod::bulk, 24, 0, false, false};
  // No collective: the GEMM's own time.
  CHECK(userbuffers_overlap_gemm_time(op, Seconds(0.0), bulk, 8, gpu, params).value() == doctest::Approx(full));
  // A collective half the GEMM's length: the GEMM loses 24 / 132 of its rate for that long.
  CHECK(userbuffers_overlap_gemm_time(op, Seconds(full / 2), bulk, 8, gpu, params).value() ==
        doctest::Approx(full + full / 2 * 24.0 / 132.0));
  // One that outlasts the GEMM: the whole GEMM on 108 SMs' worth of rate.
  CHECK(userbuffers_overlap_gemm_time(op, Seconds(10 * full), bulk, 8, gpu, params).value() ==
        doctest::Approx(full * 132.0 / 108.0));
}

TEST_CASE("a ring exchange runs the GEMM in TP chunks, three streams at a time, and its copies take no SMs") {
  const GpuSpec gpu = h100();
  const CostParameters params;
  const Op op = big_gemm();
  const UbGemmConfig ring{UbMethod::ring_exchange, 16, 0, false, false};
  Op chunk = op;
  chunk.gemm.m = op.gemm.m / 8;
  chunk.flops = op.flops / 8.0;
  const GemmShape& g = op.gemm;
  chunk.bytes = op.bytes * ((g.m / 8 * g.k + g.k * g.n + g.m / 8 * g.n) / (g.m * g.k + g.k * g.n + g.m * g.n));
  // Eight chunks over three streams: rounds of 3, 3 and 2 concurrent chunks.
  double expected = 0.0;
  for (const double concurrent : {3.0, 3.0, 2.0}) {
    Op round = chunk;
    round.gemm.batch = concurrent;
    round.flops = chunk.flops * concurrent;
    round.bytes = chunk.bytes * concurrent;
    expected += op_time(round, gpu, params).value();
  }
  CHECK(userbuffers_overlap_gemm_time(op, Seconds(0.0), ring, 8, gpu, params).value() == doctest::Approx(expected));
  CHECK(userbuffers_overlap_gemm_time(op, Seconds(1.0), ring, 8, gpu, params).value() == doctest::Approx(expected));
  // The chunks cost at least the whole GEMM (a kernel gap a round, the weight re-read).
  CHECK(expected >= op_time(op, gpu, params).value());
}
