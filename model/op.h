#pragma once
// One GPU kernel of a training step, as the cost model sees it: what kind of work, its GEMM
// shape, the floating-point work it really does and the HBM bytes it moves.
//
// Flops are the kernel's own work (hardware FLOPs: a causal flash-attention kernel that skips
// masked blocks counts half the s^2 term). Bytes are HBM traffic: inputs read plus outputs written.
// Ops are values in fixed-capacity lists (OpList) so building a layer's ops never allocates.

#include <array>
#include <cassert>
#include <cstdint>
#include <string_view>

#include "model/attention_kernel.h"
#include "model/datatype.h"
#include "model/units.h"

namespace stepcast {

enum class OpKind : std::uint8_t {
  gemm,             // dense or batched matrix multiply on tensor cores
  flash_forward,    // fused attention forward (FlashAttention / cuDNN)
  flash_backward,   // fused attention backward
  memory_bound,     // elementwise with arithmetic per byte: dropout (RNG), activations, casts
  data_movement,    // copies, gathers, permutations, padding, plain adds: bound by HBM alone
  reduction,        // row/column reductions: norms, softmax, bias gradients (bandwidth-limited,
                    // but further from it than elementwise kernels)
};

// Bits naming the dimensions of a GEMM (GemmShape::leading).
enum GemmDim : std::uint8_t { gemm_dim_m = 1, gemm_dim_n = 2, gemm_dim_k = 4 };

// C[m x n] = A[m x k] * B[k x n], `batch` independent products.
//
// `leading` says which of m, n, k is the leading dimension (the stride, in elements, between
// consecutive rows or columns) of some stored operand: C is row-major (stride n); A is stored
// row-major (stride k) or transposed (stride m); B transposed, as a weight [out x in] is (stride
// k), or row-major (stride n). The default, n and k, is a forward or data-gradient GEMM of a
// linear layer (y = x W^T, dx = dy W: m is the token count, never a stride); a weight gradient
// (dW^T = x^T dy, m and n the features, k the tokens) reads x transposed: m and n. Tensor-core
// kernels need every stride to be a multiple of 16 bytes (model/op_time.h, gemm_misaligned).
struct GemmShape {
  double m = 0.0;
  double n = 0.0;
  double k = 0.0;
  double batch = 1.0;
  std::uint8_t leading = gemm_dim_n | gemm_dim_k;
};

// The problem a fused attention kernel (flash_forward / flash_backward) works on, so its time can
// depend on how the work splits into CTAs: `batch_heads` independent (sequence, query head)
// problems, each `seq_q` queries against `seq_kv` keys, `head_dim` the mean of the Q/K and V widths. batch_heads == 0
// means the shape is unknown (a batch of mixed prefill requests): no shape effect is priced.
// A causal op may stand for layers of which a share `windowed` attend over a sliding window of
// `window` keys per query (window 0 or >= seq_kv: none); the others see every earlier key.
// `kernel` is which kernel generation runs it (its eta; known even when the shape is not).
struct AttentionShape {
  double batch_heads = 0.0;
  double seq_q = 0.0;
  double seq_kv = 0.0;
  double head_dim = 0.0;
  bool causal = false;
  double window = 0.0;
  double windowed = 0.0;
  AttentionKernel kernel = AttentionKernel::best;
  bool fp8 = false;  // FP8 inputs (Transformer Engine's FP8 dot-product attention)
};

struct Op {
  OpKind kind = OpKind::memory_bound;
  std::string_view name;  // static string: "qkv_proj", "fc1.dgrad", ...
  DataType dtype = DataType::bf16;  // input format of a gemm / flash kernel (its peak applies)
  GemmShape gemm;         // meaningful for kind == gemm
  AttentionShape attention;  // meaningful for flash kinds (may be unknown, see AttentionShape)
  Flops flops;
  Bytes bytes;
  // Kernels the op stands for, each dispatched by the host: 1, or one per local expert for
  // Transformer Engine's grouped ops, which loop over the experts in C++ (GroupedLinear's GEMMs
  // and its per-expert quantization). A GEMM with launches > 1 holds one expert's product per
  // `batch` entry (batch == launches); model/op_time.h says how the launches share the GPU.
  double launches = 1.0;
};

// A short list of ops with inline storage.
class OpList {
 public:
  static constexpr int kCapacity = 64;  // a MoE + MLA layer backward has ~47 ops

  void push(const Op& op) {
    assert(m_count < kCapacity);
    m_ops[static_cast<std::size_t>(m_count++)] = op;
  }
  [[nodiscard]] int size() const { return m_count; }
  [[nodiscard]] const Op* begin() const { return m_ops.data(); }
  [[nodiscard]] const Op* end() const { return m_ops.data() + m_count; }
  [[nodiscard]] const Op& operator[](int i) const { return m_ops[static_cast<std::size_t>(i)]; }

 private:
  std::array<Op, kCapacity> m_ops{};
  int m_count = 0;
};

}  // namespace stepcast
