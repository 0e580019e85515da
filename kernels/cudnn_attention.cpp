#include "kernels/cudnn_attention.h"

#include <cudnn.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <utility>
#include <vector>

namespace stepcast::kernels {

namespace {

std::string cudnn_message(cudnnStatus_t status) {
  std::string text = cudnnGetErrorString(status);
#if CUDNN_MAJOR >= 9
  std::array<char, 1024> last{};
  cudnnGetLastErrorString(last.data(), last.size());
  if (last[0] != '\0') text += std::string(" (") + last.data() + ")";
#endif
  return text;
}

// Graph construction failures mean "this cuDNN cannot run this graph": CudnnUnsupported.
void check(cudnnStatus_t status, const char* call, const char* file, int line) {
  if (status != CUDNN_STATUS_SUCCESS) {
    throw CudnnUnsupported(std::string(file) + ":" + std::to_string(line) + ": " + call + ": cuDNN error: " +
                           cudnn_message(status));
  }
}
#define STEPCAST_CUDNN(call) check((call), #call, __FILE__, __LINE__)

class Descriptor {
 public:
  explicit Descriptor(cudnnBackendDescriptorType_t type) { STEPCAST_CUDNN(cudnnBackendCreateDescriptor(type, &m_desc)); }
  ~Descriptor() {
    if (m_desc != nullptr) cudnnBackendDestroyDescriptor(m_desc);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  Descriptor(Descriptor&& o) noexcept : m_desc(std::exchange(o.m_desc, nullptr)) {}
  Descriptor& operator=(Descriptor&& o) noexcept {
    std::swap(m_desc, o.m_desc);
    return *this;
  }
  [[nodiscard]] cudnnBackendDescriptor_t get() const { return m_desc; }
  // The address cuDNN wants when one descriptor is an attribute of another.
  [[nodiscard]] const cudnnBackendDescriptor_t* ref() const { return &m_desc; }

 private:
  cudnnBackendDescriptor_t m_desc = nullptr;
};

template <class T>
void set(const Descriptor& d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::int64_t count,
         const T* value) {
  STEPCAST_CUDNN(cudnnBackendSetAttribute(d.get(), name, type, count, value));
}

using Dims = std::array<std::int64_t, 4>;

constexpr std::int64_t kUidQ = 1;
constexpr std::int64_t kUidK = 2;
constexpr std::int64_t kUidV = 3;
constexpr std::int64_t kUidO = 4;
constexpr std::int64_t kUidStats = 5;
constexpr std::int64_t kUidScale = 6;
constexpr std::int64_t kUidNegInf = 7;
constexpr std::int64_t kUidDO = 8;
constexpr std::int64_t kUidDQ = 9;
constexpr std::int64_t kUidDK = 10;
constexpr std::int64_t kUidDV = 11;
constexpr std::int64_t kUidDQAccum = 12;
constexpr std::int64_t kUidOne = 13;
constexpr std::int64_t kUidSoftmaxSum = 14;
constexpr std::int64_t kFirstVirtualUid = 100;

}  // namespace

std::string cudnn_version() {
  const std::size_t v = cudnnGetVersion();
  if (v < 90000) {  // cuDNN 8: major * 1000 + minor * 100 + patch
    return std::to_string(v / 1000) + "." + std::to_string((v / 100) % 10) + "." + std::to_string(v % 100);
  }
  // cuDNN 9: major * 10000 + minor * 100 + patch
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

// One operation graph, its execution plan and the descriptors both refer to: the forward and the
// backward SDPA graphs are built with the same helpers and planned the same way.
struct SdpaGraph {
  cudnnHandle_t handle = nullptr;
  // Every descriptor the graph refers to stays alive with the plan; a deque keeps references to
  // its elements valid as it grows.
  std::deque<Descriptor> keep;
  std::vector<Descriptor> ops;
  Descriptor plan{CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR};
  std::int64_t workspace = 0;
  std::int64_t next_uid = kFirstVirtualUid;
  bool causal = false;
  float scale = 1.0f;
  float negative_infinity = std::numeric_limits<float>::lowest();
  float one = 1.0f;
  std::string engine;
  // The variant pack of the last run, rebuilt only when the buffers change, so repeated runs
  // (hot measurements) pay no host-side descriptor work.
  std::vector<void*> pack_pointers;
  void* pack_workspace = nullptr;
  Descriptor pack{CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR};
  bool pack_ready = false;

  SdpaGraph() { STEPCAST_CUDNN(cudnnCreate(&handle)); }
  ~SdpaGraph() {
    if (handle != nullptr) cudnnDestroy(handle);
  }
  SdpaGraph(const SdpaGraph&) = delete;
  SdpaGraph& operator=(const SdpaGraph&) = delete;

  const Descriptor& tensor(std::int64_t uid, cudnnDataType_t type, const Dims& dims, const Dims& strides, bool is_virtual,
                           bool by_value = false, cudnnBackendTensorReordering_t reordering = CUDNN_TENSOR_REORDERING_NONE) {
    Descriptor t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    if (reordering != CUDNN_TENSOR_REORDERING_NONE) {
      set(t, CUDNN_ATTR_TENSOR_REORDERING_MODE, CUDNN_TYPE_TENSOR_REORDERING_MODE, 1, &reordering);
    }
    const std::int64_t alignment = 16;
    set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
    set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data());
    set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data());
    set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
    set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
    if (by_value) set(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value);
    STEPCAST_CUDNN(cudnnBackendFinalize(t.get()));
    keep.push_back(std::move(t));
    return keep.back();
  }

  const Descriptor& virtual_tensor(cudnnDataType_t type, const Dims& dims, const Dims& strides) {
    return tensor(next_uid++, type, dims, strides, true);
  }

  // Finalizes `op` and appends it to the graph; `config`, the pointwise, reduction or matmul
  // descriptor the operation points to, is kept alive with it.
  void add_operation(Descriptor op, Descriptor config) {
    STEPCAST_CUDNN(cudnnBackendFinalize(op.get()));
    keep.push_back(std::move(config));
    ops.push_back(std::move(op));
  }

  void pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t precision, const Descriptor& x, const Descriptor* b,
                 const Descriptor* t, const Descriptor& y, std::int64_t axis = -1) {
    Descriptor pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &precision);
    if (axis >= 0) set(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
    STEPCAST_CUDNN(cudnnBackendFinalize(pw.get()));
    Descriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, pw.ref());
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, x.ref());
    if (b != nullptr) set(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, b->ref());
    if (t != nullptr) set(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, t->ref());
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, y.ref());
    add_operation(std::move(op), std::move(pw));
  }

  void reduction(cudnnReduceTensorOp_t mode, const Descriptor& x, const Descriptor& y) {
    Descriptor r(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    const cudnnDataType_t precision = CUDNN_DATA_FLOAT;
    set(r, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode);
    set(r, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &precision);
    STEPCAST_CUDNN(cudnnBackendFinalize(r.get()));
    Descriptor op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    set(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, r.ref());
    set(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, x.ref());
    set(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, y.ref());
    add_operation(std::move(op), std::move(r));
  }

  void matmul(const Descriptor& a, const Descriptor& b, const Descriptor& c) {
    Descriptor m(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    const cudnnDataType_t precision = CUDNN_DATA_FLOAT;
    set(m, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &precision);
    STEPCAST_CUDNN(cudnnBackendFinalize(m.get()));
    Descriptor op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    set(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, a.ref());
    set(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, b.ref());
    set(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, c.ref());
    set(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, m.ref());
    add_operation(std::move(op), std::move(m));
  }

  // A view of x with other dims/strides (cudnn-frontend uses it for the transposes of P, dS, K).
  void reshape(const Descriptor& x, const Descriptor& y) {
    Descriptor op(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
    set(op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, x.ref());
    set(op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, y.ref());
    STEPCAST_CUDNN(cudnnBackendFinalize(op.get()));
    ops.push_back(std::move(op));
  }

  // Runs the plan with these tensors bound by uid. The variant pack is rebuilt only when the
  // pointers change, so repeated runs pay no host-side descriptor work.
  void execute(cudaStream_t stream, const std::vector<std::int64_t>& uids, const std::vector<void*>& pointers,
               void* workspace_ptr) {
    const cudnnStatus_t stream_status = cudnnSetStream(handle, stream);
    if (stream_status != CUDNN_STATUS_SUCCESS) {
      throw std::runtime_error("cudnnSetStream: " + cudnn_message(stream_status));
    }
    if (!pack_ready || pointers != pack_pointers || workspace_ptr != pack_workspace) {
      Descriptor p(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
      set(p, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<std::int64_t>(uids.size()), uids.data());
      set(p, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<std::int64_t>(pointers.size()),
          pointers.data());
      set(p, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace_ptr);
      STEPCAST_CUDNN(cudnnBackendFinalize(p.get()));
      pack = std::move(p);
      pack_pointers = pointers;
      pack_workspace = workspace_ptr;
      pack_ready = true;
    }
    const cudnnStatus_t status = cudnnBackendExecute(handle, plan.get(), pack.get());
    if (status != CUDNN_STATUS_SUCCESS) throw std::runtime_error("cudnnBackendExecute: " + cudnn_message(status));
  }

  // The formats and masks these graphs are built for; records the mask and scale of `s` and returns
  // cuDNN's type for the 16-bit inputs and outputs.
  cudnnDataType_t accept(ElementFormat format, const AttentionShape& s) {
    if (format != ElementFormat::bf16 && format != ElementFormat::fp16) {
      throw CudnnUnsupported("cuDNN SDPA is built here for fp16 and bf16");
    }
    if (s.causal && s.seq_q != s.seq_kv) {
      throw CudnnUnsupported("the causal mask built here is top-left aligned; it needs seq_q == seq_kv");
    }
    causal = s.causal;
    scale = s.scale;
    return format == ElementFormat::bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
  }

  void build_forward(ElementFormat format, const AttentionShape& s) {
    const cudnnDataType_t io = accept(format, s);
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    const std::int64_t b = s.batch;
    const std::int64_t h = s.heads;
    const std::int64_t hk = s.kv_heads;
    const std::int64_t sq = s.seq_q;
    const std::int64_t skv = s.seq_kv;
    const std::int64_t d = s.head_dim;
    // BSHD storage: element (b, h, s, d) at ((b * S + s) * H + h) * D + d.
    const Descriptor& q = tensor(kUidQ, io, {b, h, sq, d}, {sq * h * d, d, h * d, 1}, false);
    const Descriptor& k_t = tensor(kUidK, io, {b, hk, d, skv}, {skv * hk * d, d, 1, hk * d}, false);  // K^T view
    const Descriptor& v = tensor(kUidV, io, {b, hk, skv, d}, {skv * hk * d, d, hk * d, 1}, false);
    const Descriptor& o = tensor(kUidO, io, {b, h, sq, d}, {sq * h * d, d, h * d, 1}, false);
    const Descriptor& stats = tensor(kUidStats, f32, {b, h, sq, 1}, {h * sq, sq, 1, 1}, false);
    const Descriptor& scale_t = tensor(kUidScale, f32, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
    const Dims score_dims = {b, h, sq, skv};
    const Dims score_strides = {h * sq * skv, sq * skv, skv, 1};
    const Dims row_dims = {b, h, sq, 1};
    const Dims row_strides = {h * sq, sq, 1, 1};

    const Descriptor& s_raw = virtual_tensor(f32, score_dims, score_strides);
    matmul(q, k_t, s_raw);
    const Descriptor* scores = &virtual_tensor(f32, score_dims, score_strides);
    pointwise(CUDNN_POINTWISE_MUL, f32, s_raw, &scale_t, nullptr, *scores);
    if (causal) {
      const Descriptor& neg_inf = tensor(kUidNegInf, f32, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
      const Descriptor& rows = virtual_tensor(f32, score_dims, score_strides);
      const Descriptor& cols = virtual_tensor(f32, score_dims, score_strides);
      const Descriptor& mask = virtual_tensor(CUDNN_DATA_BOOLEAN, score_dims, score_strides);
      const Descriptor& masked = virtual_tensor(f32, score_dims, score_strides);
      pointwise(CUDNN_POINTWISE_GEN_INDEX, f32, *scores, nullptr, nullptr, rows, 2);
      pointwise(CUDNN_POINTWISE_GEN_INDEX, f32, *scores, nullptr, nullptr, cols, 3);
      pointwise(CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, rows, &cols, nullptr, mask);
      pointwise(CUDNN_POINTWISE_BINARY_SELECT, f32, *scores, &neg_inf, &mask, masked);
      scores = &masked;
    }
    const Descriptor& row_max = virtual_tensor(f32, row_dims, row_strides);
    reduction(CUDNN_REDUCE_TENSOR_MAX, *scores, row_max);
    const Descriptor& shifted = virtual_tensor(f32, score_dims, score_strides);
    pointwise(CUDNN_POINTWISE_SUB, f32, *scores, &row_max, nullptr, shifted);
    const Descriptor& exps = virtual_tensor(f32, score_dims, score_strides);
    pointwise(CUDNN_POINTWISE_EXP, f32, shifted, nullptr, nullptr, exps);
    const Descriptor& row_sum = virtual_tensor(f32, row_dims, row_strides);
    reduction(CUDNN_REDUCE_TENSOR_ADD, exps, row_sum);
    const Descriptor& log_sum = virtual_tensor(f32, row_dims, row_strides);
    pointwise(CUDNN_POINTWISE_LOG, f32, row_sum, nullptr, nullptr, log_sum);
    pointwise(CUDNN_POINTWISE_ADD, f32, row_max, &log_sum, nullptr, stats);
    // P in the I/O format: the fused engines need both operands of P V in one 16-bit type
    // (cuDNN 9.14 on an H200: "A and B need to have the same datatype in the matmul").
    const Descriptor& probs = virtual_tensor(io, score_dims, score_strides);
    pointwise(CUDNN_POINTWISE_DIV, f32, exps, &row_sum, nullptr, probs);
    matmul(probs, v, o);

    choose_plan();
  }

  // The backward graph of cudnn-frontend's SDPA backward node (node/scaled_dot_product_flash_attention.h,
  // SDPABackwardNode), written with the backend API:
  //   D  = sum_row(dO * O) * 1                           [b, h, s_q, 1]
  //   S  = (Q K^T) * scale; P = exp(S - Stats), causal scores selected to -FLT_MAX
  //   dV = P^T dO                (GQA: per query head, then summed over each KV head's group)
  //   dS = (dO V^T - D) * P * scale
  //   dK = dS^T Q                (GQA as dV)
  //   dQ = identity(dQ_accum),  dQ_accum = dS K: a non-virtual fp32 accumulator the caller
  //        places in the workspace (its presence selects cuDNN 9's non-workspace dP algorithm).
  // K and V enter transposed ([b, hk, d, s_kv] views of BSHD storage) as the backend expects;
  // the P^T, dS^T and K views are reshape operations. Two generations of the frontend differ:
  //   modern (frontends for cuDNN >= 9.6): D is a non-virtual fp32 tensor in the workspace, the
  //     causal mask comes after the Stats subtraction with INT32 indices, dP is not multiplied by
  //     1, the accumulator has no reordering and cuDNN zeroes it itself;
  //   legacy (cuDNN 9.0-9.5 era): D virtual, mask before the subtraction, dP * 1, the accumulator
  //     in F16x16 reordering, zeroed by the caller before each run.
  // Within legacy, `ds_in_io` feeds dS and the reshaped K to dQ's matmul in the I/O type instead
  // of fp32, and `int_index` makes the mask's indices INT32 instead of fp32.
  struct BackwardForm {
    bool modern = false;
    bool ds_in_io = false;
    bool int_index = false;
  };
  void build_backward(ElementFormat format, const AttentionShape& s, const BackwardForm& form) {
    const cudnnDataType_t io = accept(format, s);
    const bool ds_in_io = !form.modern && form.ds_in_io;
    const bool int_index = form.modern || form.int_index;
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    const std::int64_t b = s.batch;
    const std::int64_t h = s.heads;
    const std::int64_t hk = s.kv_heads;
    const std::int64_t sq = s.seq_q;
    const std::int64_t skv = s.seq_kv;
    const std::int64_t d = s.head_dim;
    const Dims q_dims = {b, h, sq, d};
    const Dims q_strides = {sq * h * d, d, h * d, 1};  // BSHD
    const Dims kv_dims = {b, hk, skv, d};
    const Dims kv_strides = {skv * hk * d, d, hk * d, 1};
    const Dims kv_t_dims = {b, hk, d, skv};
    const Dims kv_t_strides = {skv * hk * d, d, 1, hk * d};
    const Dims score_dims = {b, h, sq, skv};
    const Dims score_strides = {h * sq * skv, sq * skv, skv, 1};
    const Dims score_t_dims = {b, h, skv, sq};
    const Dims score_t_strides = {h * sq * skv, sq * skv, 1, skv};
    const Dims row_dims = {b, h, sq, 1};
    const Dims row_strides = {h * sq, sq, 1, 1};
    const Dims per_head_kv_dims = {b, h, skv, d};
    const Dims per_head_kv_strides = {h * skv * d, skv * d, d, 1};
    const Dims scalar = {1, 1, 1, 1};

    const Descriptor& q = tensor(kUidQ, io, q_dims, q_strides, false);
    const Descriptor& k_t = tensor(kUidK, io, kv_t_dims, kv_t_strides, false);
    const Descriptor& v_t = tensor(kUidV, io, kv_t_dims, kv_t_strides, false);
    const Descriptor& o = tensor(kUidO, io, q_dims, q_strides, false);
    const Descriptor& d_o = tensor(kUidDO, io, q_dims, q_strides, false);
    const Descriptor& stats = tensor(kUidStats, f32, row_dims, row_strides, false);
    const Descriptor& dq = tensor(kUidDQ, io, q_dims, q_strides, false);
    const Descriptor& dk = tensor(kUidDK, io, kv_dims, kv_strides, false);
    const Descriptor& dv = tensor(kUidDV, io, kv_dims, kv_strides, false);
    const Descriptor& dq_accum =
        tensor(kUidDQAccum, f32, q_dims, {h * sq * d, sq * d, d, 1}, false, false,
               form.modern ? CUDNN_TENSOR_REORDERING_NONE : CUDNN_TENSOR_REORDERING_F16x16);
    const Descriptor& scale_t = tensor(kUidScale, f32, scalar, scalar, false, true);
    const Descriptor& one_t = tensor(kUidOne, f32, scalar, scalar, false, true);

    // D = rowsum(dO * O) * 1
    const Descriptor& do_o = virtual_tensor(f32, q_dims, {h * sq * d, sq * d, h * d, 1});
    pointwise(CUDNN_POINTWISE_MUL, f32, d_o, &o, nullptr, do_o);
    const Descriptor& d_raw = virtual_tensor(f32, row_dims, row_strides);
    reduction(CUDNN_REDUCE_TENSOR_ADD, do_o, d_raw);
    const Descriptor& d_sum = form.modern ? tensor(kUidSoftmaxSum, f32, row_dims, row_strides, false)
                                          : virtual_tensor(f32, row_dims, row_strides);
    pointwise(CUDNN_POINTWISE_MUL, f32, d_raw, &one_t, nullptr, d_sum);

    // The causal mask: scores of keys after the query set to -FLT_MAX (exp gives 0).
    const auto apply_mask = [&](const Descriptor& in) -> const Descriptor& {
      const Descriptor& neg_inf = tensor(kUidNegInf, f32, scalar, scalar, false, true);
      const cudnnDataType_t index = int_index ? CUDNN_DATA_INT32 : f32;
      const Descriptor& rows = virtual_tensor(index, score_dims, score_strides);
      const Descriptor& cols = virtual_tensor(index, score_dims, score_strides);
      const Descriptor& mask = virtual_tensor(CUDNN_DATA_BOOLEAN, score_dims, score_strides);
      const Descriptor& masked = virtual_tensor(f32, score_dims, score_strides);
      pointwise(CUDNN_POINTWISE_GEN_INDEX, index, in, nullptr, nullptr, rows, 2);
      pointwise(CUDNN_POINTWISE_GEN_INDEX, index, in, nullptr, nullptr, cols, 3);
      pointwise(CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, rows, &cols, nullptr, mask);
      pointwise(CUDNN_POINTWISE_BINARY_SELECT, f32, in, &neg_inf, &mask, masked);
      return masked;
    };

    // P = exp(S * scale - Stats), masked
    const Descriptor& s_raw = virtual_tensor(f32, score_dims, score_strides);
    matmul(q, k_t, s_raw);
    const Descriptor* scores = &virtual_tensor(f32, score_dims, score_strides);
    pointwise(CUDNN_POINTWISE_MUL, f32, s_raw, &scale_t, nullptr, *scores);
    if (causal && !form.modern) scores = &apply_mask(*scores);
    const Descriptor* shifted = &virtual_tensor(f32, score_dims, score_strides);
    pointwise(CUDNN_POINTWISE_SUB, f32, *scores, &stats, nullptr, *shifted);
    if (causal && form.modern) shifted = &apply_mask(*shifted);
    const Descriptor& probs = virtual_tensor(f32, score_dims, score_strides);
    pointwise(CUDNN_POINTWISE_EXP, f32, *shifted, nullptr, nullptr, probs);

    // out = scores^T x, summed over the query heads of each KV head when they are more (GQA, MQA).
    const auto transposed_times = [&](const Descriptor& scores_in, const Descriptor& x, const Descriptor& out) {
      const Descriptor& scores_t = virtual_tensor(io, score_t_dims, score_t_strides);
      reshape(scores_in, scores_t);
      if (h == hk) {
        matmul(scores_t, x, out);
      } else {
        const Descriptor& per_head = virtual_tensor(io, per_head_kv_dims, per_head_kv_strides);
        matmul(scores_t, x, per_head);
        reduction(CUDNN_REDUCE_TENSOR_ADD, per_head, out);
      }
    };

    // dV = P^T dO
    transposed_times(probs, d_o, dv);

    // dS = (dO V^T - D) * P * scale
    const Descriptor* dp = &virtual_tensor(f32, score_dims, score_strides);
    matmul(d_o, v_t, *dp);
    if (!form.modern) {
      const Descriptor& dp_one = virtual_tensor(f32, score_dims, score_strides);
      pointwise(CUDNN_POINTWISE_MUL, f32, *dp, &one_t, nullptr, dp_one);
      dp = &dp_one;
    }
    const Descriptor& dp_d = virtual_tensor(f32, score_dims, score_strides);
    pointwise(CUDNN_POINTWISE_SUB, f32, *dp, &d_sum, nullptr, dp_d);
    const Descriptor& ds_unscaled = virtual_tensor(f32, score_dims, score_strides);
    pointwise(CUDNN_POINTWISE_MUL, f32, dp_d, &probs, nullptr, ds_unscaled);
    const Descriptor& ds = virtual_tensor(ds_in_io ? io : f32, score_dims, score_strides);
    pointwise(CUDNN_POINTWISE_MUL, f32, ds_unscaled, &scale_t, nullptr, ds);

    // dK = dS^T Q
    transposed_times(ds, q, dk);

    // dQ = dS K through the fp32 accumulator. Both operands in one type (cuDNN refuses mixed
    // matmul operands): the frontend leaves the reshaped K, like dS, in its intermediate type, fp32.
    const Descriptor& k = virtual_tensor(ds_in_io ? io : f32, kv_dims, kv_strides);
    reshape(k_t, k);
    matmul(ds, k, dq_accum);
    pointwise(CUDNN_POINTWISE_IDENTITY, f32, dq_accum, nullptr, nullptr, dq);

    choose_plan();
  }

  // Finalizes the operation graph of `ops` and picks the first engine configuration that builds a
  // plan: heuristic mode A's, best first, then every engine in cuDNN's global list. Throws
  // CudnnUnsupported with every refusal when none does.
  void choose_plan() {
    Descriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    std::vector<cudnnBackendDescriptor_t> raw_ops;
    for (const Descriptor& op : ops) raw_ops.push_back(op.get());
    set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<std::int64_t>(raw_ops.size()),
        raw_ops.data());
    set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    STEPCAST_CUDNN(cudnnBackendFinalize(graph.get()));

    Descriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    set(heuristics, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, graph.ref());
    set(heuristics, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    STEPCAST_CUDNN(cudnnBackendFinalize(heuristics.get()));
    // The heuristic's configurations, best first (the count comes from a first query).
    std::int64_t count = 0;
    STEPCAST_CUDNN(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr));
    std::vector<Descriptor> configs;
    std::vector<cudnnBackendDescriptor_t> raw_configs;
    for (std::int64_t i = 0; i < count; ++i) {
      configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
      raw_configs.push_back(configs.back().get());
    }
    std::int64_t returned = 0;
    if (count > 0) {
      STEPCAST_CUDNN(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                              CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned, raw_configs.data()));
    }
    std::string failures = " heuristic mode A offered " + std::to_string(returned) + " of " + std::to_string(count) + ";";
    for (std::int64_t i = 0; i < returned; ++i) {
      if (try_plan(configs[static_cast<std::size_t>(i)], failures, "heuristic config " + std::to_string(i))) {
        engine = "cuDNN " + cudnn_version() + " heuristic mode A, engine config " + std::to_string(i) + " of " +
                 std::to_string(returned);
        keep.push_back(std::move(graph));
        keep.push_back(std::move(heuristics));
        for (Descriptor& c : configs) keep.push_back(std::move(c));
        return;
      }
    }
    // Every engine cuDNN has for the graph, in its global order: the heuristic may rank none.
    std::int64_t engines = 0;
    std::int64_t got = 0;
    STEPCAST_CUDNN(cudnnBackendGetAttribute(graph.get(), CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT,
                                            CUDNN_TYPE_INT64, 1, &got, &engines));
    failures += " " + std::to_string(engines) + " engines in the global list;";
    for (std::int64_t index = 0; index < engines; ++index) {
      Descriptor e(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
      set(e, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, graph.ref());
      set(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index);
      const cudnnStatus_t engine_status = cudnnBackendFinalize(e.get());
      if (engine_status != CUDNN_STATUS_SUCCESS) {
        if (failures.size() < 2000) failures += " [engine " + std::to_string(index) + ": " + cudnn_message(engine_status) + "]";
        continue;
      }
      Descriptor config(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
      set(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, e.ref());
      if (cudnnBackendFinalize(config.get()) != CUDNN_STATUS_SUCCESS) continue;
      if (try_plan(config, failures, "engine " + std::to_string(index))) {
        engine = "cuDNN " + cudnn_version() + " engine " + std::to_string(index) + " of the global list";
        keep.push_back(std::move(graph));
        keep.push_back(std::move(e));
        keep.push_back(std::move(config));
        return;
      }
    }
    throw CudnnUnsupported("no cuDNN engine runs this SDPA graph:" + failures);
  }

  // Builds the execution plan for one engine configuration; on failure appends why.
  bool try_plan(const Descriptor& config, std::string& failures, const std::string& what) {
    Descriptor candidate(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    set(candidate, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    set(candidate, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, config.ref());
    const cudnnStatus_t status = cudnnBackendFinalize(candidate.get());
    if (status != CUDNN_STATUS_SUCCESS) {
      if (failures.size() < 2000) failures += " [" + what + ": " + cudnn_message(status) + "]";
      return false;
    }
    std::int64_t got = 0;
    STEPCAST_CUDNN(cudnnBackendGetAttribute(candidate.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                            CUDNN_TYPE_INT64, 1, &got, &workspace));
    plan = std::move(candidate);
    return true;
  }
};

struct CudnnSdpaForward::Impl : SdpaGraph {};

CudnnSdpaForward::CudnnSdpaForward(ElementFormat format, const AttentionShape& shape) : m_impl(std::make_unique<Impl>()) {
  m_impl->build_forward(format, shape);
}

CudnnSdpaForward::~CudnnSdpaForward() = default;

std::size_t CudnnSdpaForward::workspace_bytes() const { return static_cast<std::size_t>(m_impl->workspace); }

const std::string& CudnnSdpaForward::engine_description() const { return m_impl->engine; }

void CudnnSdpaForward::run(cudaStream_t stream, const void* q, const void* k, const void* v, void* o, float* stats,
                           void* workspace) const {
  std::vector<std::int64_t> uids = {kUidQ, kUidK, kUidV, kUidO, kUidStats, kUidScale};
  std::vector<void*> pointers = {const_cast<void*>(q), const_cast<void*>(k), const_cast<void*>(v), o, stats,
                                 &m_impl->scale};
  if (m_impl->causal) {
    uids.push_back(kUidNegInf);
    pointers.push_back(&m_impl->negative_infinity);
  }
  m_impl->execute(stream, uids, pointers, workspace);
}

namespace {
std::size_t align_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }
// From cuDNN 9.6.0 the backward zeroes its dQ accumulator itself; before, the caller had to
// (cudnn-frontend, SDPABackwardNode::collect_tensors_in_workspace_node).
constexpr std::size_t kCudnnSelfZeroingVersion = 90600;
}  // namespace

struct CudnnSdpaBackward::Impl {
  std::unique_ptr<SdpaGraph> graph;
  bool modern = false;
  int form = 0;                       // index in the constructor's list of graph forms
  std::size_t accumulator_bytes = 0;  // fp32 dQ accumulator [b, h, s_q, d]
  std::size_t row_sum_bytes = 0;      // fp32 D [b, h, s_q] (modern form)
  std::string description;
  // Workspace layout: cuDNN's own, then the accumulator, then D, each 256-byte aligned.
  [[nodiscard]] std::size_t accumulator_offset() const { return align_up(static_cast<std::size_t>(graph->workspace)); }
  [[nodiscard]] std::size_t row_sum_offset() const { return accumulator_offset() + align_up(accumulator_bytes); }
};

CudnnSdpaBackward::CudnnSdpaBackward(ElementFormat format, const AttentionShape& shape, int first_form)
    : m_impl(std::make_unique<Impl>()) {
  const std::size_t rows = static_cast<std::size_t>(shape.batch) * shape.heads * shape.seq_q;
  m_impl->accumulator_bytes = rows * shape.head_dim * sizeof(float);
  m_impl->row_sum_bytes = rows * sizeof(float);
  // The current frontend's form first (where cuDNN is new enough for it), then the legacy forms.
  struct Variant {
    SdpaGraph::BackwardForm form;
    const char* name;
  };
  std::vector<Variant> variants;
  if (cudnnGetVersion() >= kCudnnSelfZeroingVersion) variants.push_back({{true, false, true}, "cudnn-frontend 1.x form"});
  variants.push_back({{false, false, false}, "legacy form, dS fp32"});
  if (shape.causal) variants.push_back({{false, false, true}, "legacy form, dS fp32, INT32 mask indices"});
  variants.push_back({{false, true, false}, "legacy form, dS and K in the I/O type for dQ"});
  std::string failures;
  for (int index = std::max(first_form, 0); index < static_cast<int>(variants.size()); ++index) {
    const Variant& variant = variants[static_cast<std::size_t>(index)];
    auto graph = std::make_unique<SdpaGraph>();
    try {
      graph->build_backward(format, shape, variant.form);
    } catch (const CudnnUnsupported& e) {
      failures += std::string(failures.empty() ? "" : " | ") + variant.name + ": " + e.what();
      continue;
    }
    m_impl->modern = variant.form.modern;
    m_impl->form = index;
    m_impl->description = graph->engine + "; " + variant.name +
                          (zeroes_accumulator() ? "; timed runs include zeroing the fp32 dQ accumulator"
                                                : "; cuDNN zeroes the dQ accumulator itself");
    m_impl->graph = std::move(graph);
    return;
  }
  if (failures.empty()) failures = "no graph form left to try";
  throw CudnnUnsupported("no cuDNN engine runs this SDPA backward graph: " + failures);
}

int CudnnSdpaBackward::form() const { return m_impl->form; }

CudnnSdpaBackward::~CudnnSdpaBackward() = default;

std::size_t CudnnSdpaBackward::workspace_bytes() const { return m_impl->row_sum_offset() + m_impl->row_sum_bytes; }

const std::string& CudnnSdpaBackward::engine_description() const { return m_impl->description; }

bool CudnnSdpaBackward::zeroes_accumulator() const { return cudnnGetVersion() < kCudnnSelfZeroingVersion; }

void CudnnSdpaBackward::run(cudaStream_t stream, const void* q, const void* k, const void* v, const void* o,
                            const void* d_o, const float* stats, void* dq, void* dk, void* dv, void* workspace,
                            bool zero_accumulator) const {
  SdpaGraph& g = *m_impl->graph;
  char* base = static_cast<char*>(workspace);
  void* accumulator = base + m_impl->accumulator_offset();
  void* row_sum = base + m_impl->row_sum_offset();
  if (zero_accumulator || zeroes_accumulator()) {
    const cudaError_t zeroed = cudaMemsetAsync(accumulator, 0, m_impl->accumulator_bytes, stream);
    if (zeroed != cudaSuccess) throw std::runtime_error(std::string("cudaMemsetAsync: ") + cudaGetErrorString(zeroed));
  }
  std::vector<std::int64_t> uids = {kUidQ,  kUidK,  kUidV,       kUidO,     kUidDO, kUidStats, kUidDQ,
                                    kUidDK, kUidDV, kUidDQAccum, kUidScale, kUidOne};
  std::vector<void*> pointers = {const_cast<void*>(q), const_cast<void*>(k),   const_cast<void*>(v),
                                 const_cast<void*>(o), const_cast<void*>(d_o), const_cast<float*>(stats),
                                 dq,                   dk,                     dv,
                                 accumulator,          &g.scale,               &g.one};
  if (m_impl->modern) {
    uids.push_back(kUidSoftmaxSum);
    pointers.push_back(row_sum);
  }
  if (g.causal) {
    uids.push_back(kUidNegInf);
    pointers.push_back(&g.negative_infinity);
  }
  g.execute(stream, uids, pointers, workspace);
}

}  // namespace stepcast::kernels
