// The kernels of a decode step, predicted against measurements on an H200
// (tests/fixtures/measured/h200_inference_kernels_2026-11-29.json, taken with
// scripts/measure_inference_kernels.py: PyTorch 2.11, cuBLAS and FlashAttention through
// F.linear and F.scaled_dot_product_attention). Each point's error is printed.
//
//   linear   weight-streaming GEMMs of Llama 70B's shapes at batch 1 to 256: memory-bound up to
//            ~128 rows, then compute takes over
//   decode   one query per sequence over a cached context (MHA and GQA): the KV read
//   copy     a 2 GiB copy: the STREAM bandwidth memory_bandwidth_eta stands for
// Bars (mean absolute error): decode attention 10% (a pure KV stream); weight-streaming GEMMs
// 20% (the skinny tiling and split-K choice are a heuristic of cuBLAS's; near m = 128 the
// roofline's max under-counts what the kernels do not overlap). The QKV points at batch 1-64
// are where gemm_stream_bytes_per_sm_clock was fitted.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "model/inference_ops.h"
#include "model/op_time.h"
#include "simulator/catalog.h"

namespace stepcast {
namespace {

constexpr double kAttentionMaeBar = 0.10;
constexpr double kLinearMaeBar = 0.20;
const char* const kMeasured = "tests/fixtures/measured/h200_inference_kernels_2026-11-29.json";

nlohmann::json measured() {
  std::ifstream in(kMeasured);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

Op linear_op(double m, double n, double k) {
  Op op;
  op.kind = OpKind::gemm;
  op.name = "linear";
  op.dtype = DataType::bf16;
  op.gemm = {m, n, k, 1.0};
  op.flops = Flops(2.0 * m * n * k);
  op.bytes = Bytes(2.0 * (n * k + m * k + m * n));
  return op;
}

InferenceShape attention_shape(int heads, int kv_heads) {
  TransformerSpec m;
  m.layers = 1;
  m.hidden = heads * 128;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.head_dim = 128;
  m.ffn_hidden = 4 * m.hidden;
  m.vocab = 32000;
  return make_inference_shape(m, ParallelConfig{}, precision_shorthand(DataType::bf16), {});
}

}  // namespace

TEST_CASE("decode-step kernels on an H200: predicted against measured") {
  const GpuSpec& h200 = *Catalog::builtin().find_gpu("h200-sxm-141gb");
  const CostParameters cost;
  double linear_sum = 0.0, attention_sum = 0.0;
  int linear_rows = 0, attention_rows = 0;
  std::printf("\n%-40s %10s %10s %8s\n", "H200 kernel", "measured", "predicted", "error");
  const nlohmann::json file = measured();
  for (const auto& p : file["points"]) {
    const std::string kind = p["kind"];
    const double t = p["median_s"];
    if (kind == "linear") {
      const double m = p["m"], n = p["n"], k = p["k"];
      const double predicted = op_time(linear_op(m, n, k), h200, cost).value();
      const double error = predicted / t - 1.0;
      std::printf("%-40s %8.1fus %8.1fus %+7.1f%%\n",
                  ("linear " + std::string(p["name"]) + " m=" + std::to_string(static_cast<int>(m))).c_str(),
                  t * 1e6, predicted * 1e6, 100.0 * error);
      linear_sum += std::abs(error);
      ++linear_rows;
    } else if (kind == "decode") {
      const double batch = p["batch"], context = p["context"];
      const Op op = decode_attention_op(attention_shape(p["heads"], p["kv_heads"]), batch, batch * context);
      const double predicted = op_time(op, h200, cost).value();
      const double error = predicted / t - 1.0;
      std::printf("%-40s %8.1fus %8.1fus %+7.1f%%\n", "decode attention", t * 1e6, predicted * 1e6, 100.0 * error);
      attention_sum += std::abs(error);
      ++attention_rows;
    } else if (kind == "copy") {
      const double achieved = p["bytes"].get<double>() / t / h200.memory_bandwidth.value();
      std::printf("%-40s  copy reaches %.3f of the datasheet bandwidth\n", "2 GiB copy", achieved);
    }
  }
  REQUIRE(linear_rows == 18);
  REQUIRE(attention_rows == 4);
  std::printf("linear: mean |error| %.1f%%; decode attention: mean |error| %.1f%%\n", 100.0 * linear_sum / linear_rows,
              100.0 * attention_sum / attention_rows);
  CHECK(attention_sum / attention_rows <= kAttentionMaeBar);
  CHECK(linear_sum / linear_rows <= kLinearMaeBar);
}

}  // namespace stepcast
