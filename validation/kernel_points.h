#pragma once
// Measured kernels as the cost model sees them: each harness record of a GEMM, attention,
// elementwise or memory kernel becomes an Op (model/op.h) with its measured time, so that
// calibration fits and validation compares through model/op_time.h itself.
//
// Mapping (one rule per kind):
//   gemm         OpKind::gemm, dtype = the record's precision, shape m x n x k with
//                batch * groups products; FLOPs and bytes as the record counts them. A grouped
//                record (groups > 1) is the harness's loop of one cuBLASLt call per group on one
//                stream: Op::launches = groups, KernelPoint::streams = 1.
//   attention    forward / backward: OpKind::flash_forward / flash_backward with the record's
//                FLOPs (causal pairs only) and bytes; component attention.<direction> for cuDNN's
//                fused SDPA (what training runs), attention.<direction>.<impl> for other
//                implementations. decode: OpKind::memory_bound (a decode step streams the KV
//                cache; its FLOPs are negligible), component attention.decode.
//   elementwise  norms and softmax (rmsnorm, layernorm, softmax): OpKind::reduction, component
//                reduction; the others (gelu, swiglu, rope, bias_dropout_add): OpKind::memory_bound,
//                component elementwise; bytes as recorded.
//   memory       OpKind::data_movement, component memory (copy, triad: the STREAM bandwidth).
// The time compared is the record's median (robust to the occasional slow sample). A record timed
// hot (method.mode) is a point with cold = false and " [hot]" after its name.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/op.h"
#include "validation/measurement.h"

namespace stepcast {

struct KernelPoint {
  std::string source;     // the file it came from ("" when built in code)
  std::string component;  // "gemm.bf16", "attention.forward", ...
  std::string label;      // the record's name
  Op op;
  double measured_s = 0.0;
  // How it was timed (validation/harness/device_timer.h): cold, one launch alone after an L2
  // flush; hot, back to back with warm caches, as a training step runs kernels.
  bool cold = true;
  // Streams a GEMM of several launches (Op::launches) was issued on; 0: the model's own
  // CostParameters::grouped_gemm_streams. The harness loops over an MoE group's GEMMs on one stream.
  double streams = 0.0;
  // The mean SM clock over the kept samples (the harness's method.sm_clock_mhz, NVML), in Hz; 0:
  // not measured. The harness keeps samples down to 0.75 of the default clock (validation/
  // throttle.h), and a long GEMM on a 700 W H200 holds 1550-1750 MHz of its 1980: the fit prices
  // the point at this clock (kernel_fit.h), so its efficiencies are at the datasheet's clock.
  double sm_clock_hz = 0.0;
  std::map<std::string, double> shape;  // the quantities coverage tracks (m, n, k, batch, seq_kv, bytes, ...)
  // The kernel that ran, from a GEMM record's `algorithm` (describe_kernel); "" when the record
  // has none (files before schema_version 2) or is not a GEMM. Shown by `stepcast validate`.
  std::string kernel;
};

// "algo 21 tile 128x256 splitK 1": the algorithm id, the CTA tile (rows x columns of C), the
// K splits, then the reduction scheme when it is not "none" and the thread-block cluster shape
// when it is neither "auto" nor "1x1x1". An unnamed tile id prints as "#<id>".
std::string describe_kernel(const GemmAlgorithm& algorithm);

// The kernel records of a file, in file order; collective and selftest records are not kernels.
std::vector<KernelPoint> kernel_points(const MeasurementFile& file);

// Which of m, n, k are strides of the operands of a harness GEMM (GemmShape::leading) in `layout`
// ("TN", "NN", "NT", "TT": op(A), op(B)). The harness calls cuBLASLt column-major (kernels/gemm.h),
// so C's stride is m: "TN" has strides k and m, "NN" m and k, "NT" m and n. A linear layer's
// forward, data- and weight-gradient GEMMs as frameworks call them are TN, NN and NT with the
// token count as n, n and k: never a stride.
std::uint8_t harness_leading_dims(std::string_view layout);

// A GEMM point from its inputs (shared by the harness mapping and tests that feed published rows).
KernelPoint gemm_kernel_point(DataType precision, double m, double n, double k, double batch, double measured_s,
                       double element_bytes, std::string label);

}  // namespace stepcast
