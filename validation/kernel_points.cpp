#include "validation/kernel_points.h"

#include <fmt/format.h>

#include <string>
#include <variant>

namespace stepcast {

KernelPoint gemm_kernel_point(DataType precision, double m, double n, double k, double batch, double measured_s,
                       double element_bytes, std::string label) {
  KernelPoint p;
  p.component = "gemm." + std::string(to_string(precision));
  p.label = std::move(label);
  p.op.kind = OpKind::gemm;
  p.op.name = "gemm";
  p.op.dtype = precision;
  p.op.gemm = {m, n, k, batch};
  p.op.flops = Flops(2.0 * m * n * k * batch);
  p.op.bytes = Bytes(element_bytes * batch * (m * k + k * n + m * n));
  p.measured_s = measured_s;
  p.shape = {{"m", m}, {"n", n}, {"k", k}, {"batch", batch}};
  return p;
}

std::uint8_t harness_leading_dims(std::string_view layout) {
  // kernels/gemm.cpp: column-major C (m x n), ldc = m; A stored k x m (T, lda = k) or m x k (N, lda = m);
  // B stored n x k (T, ldb = n) or k x n (N, ldb = k).
  const bool transpose_a = !layout.empty() && layout[0] == 'T';
  const bool transpose_b = layout.size() > 1 && layout[1] == 'T';
  return static_cast<std::uint8_t>(gemm_dim_m | (transpose_a ? gemm_dim_k : gemm_dim_m) |
                                   (transpose_b ? gemm_dim_n : gemm_dim_k));
}

std::string describe_kernel(const GemmAlgorithm& a) {
  // Built with fmt: GCC 12's -Wrestrict misfires on `"#" + std::to_string(...)` inlined into operator+.
  std::string text = fmt::format("algo {} tile {} splitK {}", a.id,
                                 a.tile.empty() ? fmt::format("#{}", a.tile_id) : a.tile, a.splitk_num);
  if (a.reduction_scheme != "none") text += " " + a.reduction_scheme;
  if (!a.cluster_shape.empty() && a.cluster_shape != "auto" && a.cluster_shape != "1x1x1") {
    text += " cluster " + a.cluster_shape;
  }
  return text;
}

std::vector<KernelPoint> kernel_points(const MeasurementFile& file) {
  std::vector<KernelPoint> out;
  for (const Measurement& r : file.records) {
    KernelPoint p;
    p.cold = r.method.mode != "hot";
    p.label = p.cold ? r.name : r.name + " [hot]";
    p.measured_s = r.time.median_s;
    if (r.method.sm_clock_mhz && *r.method.sm_clock_mhz > 0.0) p.sm_clock_hz = *r.method.sm_clock_mhz * 1e6;
    p.op.flops = r.flops;
    p.op.bytes = r.bytes;
    if (const auto* g = std::get_if<GemmInputs>(&r.inputs)) {
      p.component = "gemm." + std::string(to_string(g->precision));
      p.op.kind = OpKind::gemm;
      p.op.name = "gemm";
      p.op.dtype = g->precision;
      p.op.gemm = {static_cast<double>(g->m), static_cast<double>(g->n), static_cast<double>(g->k),
                   static_cast<double>(g->batch * g->groups), harness_leading_dims(g->layout)};
      if (g->groups > 1) {
        // validation/harness/gemm_suite.cpp: a loop of per-group cuBLASLt calls on one stream.
        p.op.launches = static_cast<double>(g->groups);
        p.streams = 1.0;
      }
      p.shape = {{"m", p.op.gemm.m}, {"n", p.op.gemm.n}, {"k", p.op.gemm.k}, {"batch", p.op.gemm.batch}};
      if (r.algorithm) p.kernel = describe_kernel(*r.algorithm);
    } else if (const auto* a = std::get_if<AttentionInputs>(&r.inputs)) {
      p.op.dtype = a->dtype;
      // The CTA-shape and head-dim terms (model/op_time.h) describe cuDNN's and FlashAttention's
      // tensor-core kernels; stepcast's own reference kernels run at a few percent of peak, bound by
      // neither, and keep a shape-blind efficiency.
      if (a->impl == "cudnn_sdpa") {
        p.op.attention = {static_cast<double>(a->batch * a->heads), static_cast<double>(a->seq_q),
                          static_cast<double>(a->seq_kv), static_cast<double>(a->head_dim), a->causal};
      }
      const std::string impl = a->impl == "cudnn_sdpa" ? "" : "." + a->impl;
      switch (a->direction) {
        case AttentionDirection::forward:
          p.component = "attention.forward" + impl;
          p.op.kind = OpKind::flash_forward;
          p.op.name = "attention.forward";
          break;
        case AttentionDirection::backward:
          p.component = "attention.backward" + impl;
          p.op.kind = OpKind::flash_backward;
          p.op.name = "attention.backward";
          break;
        case AttentionDirection::decode:
          p.component = "attention.decode";
          p.op.kind = OpKind::memory_bound;
          p.op.name = "attention.decode";
          break;
      }
      p.shape = {{"batch", static_cast<double>(a->batch)},       {"heads", static_cast<double>(a->heads)},
                 {"seq_q", static_cast<double>(a->seq_q)},       {"seq_kv", static_cast<double>(a->seq_kv)},
                 {"head_dim", static_cast<double>(a->head_dim)}, {"bytes", r.bytes.value()}};
    } else if (const auto* e = std::get_if<ElementwiseInputs>(&r.inputs)) {
      const bool reduction = e->op == "rmsnorm" || e->op == "layernorm" || e->op == "softmax";
      p.component = reduction ? "reduction" : "elementwise";
      p.op.kind = reduction ? OpKind::reduction : OpKind::memory_bound;
      p.op.name = reduction ? "reduction" : "elementwise";
      p.op.dtype = e->dtype;
      p.shape = {{"bytes", r.bytes.value()}};
    } else if (const auto* m = std::get_if<MemoryInputs>(&r.inputs)) {
      p.component = "memory";
      p.op.kind = OpKind::data_movement;
      p.op.name = "memory";
      p.op.dtype = m->dtype;
      p.shape = {{"bytes", r.bytes.value()}};
    } else {
      continue;  // collective or selftest
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace stepcast
