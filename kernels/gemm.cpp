#include "kernels/gemm.h"

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <utility>

#include "kernels/cuda_check.h"

namespace stepcast::kernels {

namespace {

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw_cuda_error("cuBLASLt", call, file, line, std::string(cublasLtGetStatusString(status)));
  }
}
#define STEPCAST_CUBLAS(call) check_cublas((call), #call, __FILE__, __LINE__)

cudaDataType_t cuda_type(ElementFormat f) {
  switch (f) {
    case ElementFormat::fp32: return CUDA_R_32F;
    case ElementFormat::fp16: return CUDA_R_16F;
    case ElementFormat::bf16: return CUDA_R_16BF;
    case ElementFormat::e4m3: return CUDA_R_8F_E4M3;
    case ElementFormat::e5m2: return CUDA_R_8F_E5M2;
    case ElementFormat::int8: return CUDA_R_8I;
    case ElementFormat::int32: return CUDA_R_32I;
  }
  return CUDA_R_32F;
}

bool is_fp8(ElementFormat f) { return f == ElementFormat::e4m3 || f == ElementFormat::e5m2; }

// cuBLASLt's error log lines since the last take_logged_errors(): the reason behind a
// CUBLAS_STATUS_NOT_SUPPORTED (an alignment, a type combination) is only said there.
constexpr std::size_t kMaxLoggedChars = 1500;
std::mutex g_log_mutex;
std::string g_logged;

void log_callback(int /*level*/, const char* function, const char* message) {
  const std::lock_guard<std::mutex> lock(g_log_mutex);
  if (g_logged.size() >= kMaxLoggedChars) return;
  if (!g_logged.empty()) g_logged += "; ";
  g_logged += std::string("[") + (function != nullptr ? function : "?") + "] " + (message != nullptr ? message : "");
  if (g_logged.size() > kMaxLoggedChars) g_logged.resize(kMaxLoggedChars);
}

std::string take_logged_errors() {
  const std::lock_guard<std::mutex> lock(g_log_mutex);
  std::string s;
  s.swap(g_logged);
  return s.empty() ? s : "; cuBLASLt log: " + s;
}

}  // namespace

std::size_t gemm_a_elements(const GemmSpec& s) { return static_cast<std::size_t>(s.m) * static_cast<std::size_t>(s.k); }
std::size_t gemm_b_elements(const GemmSpec& s) { return static_cast<std::size_t>(s.k) * static_cast<std::size_t>(s.n); }
std::size_t gemm_c_elements(const GemmSpec& s) { return static_cast<std::size_t>(s.m) * static_cast<std::size_t>(s.n); }
std::int64_t gemm_lda(const GemmSpec& s) { return s.transpose_a ? s.k : s.m; }
std::int64_t gemm_ldb(const GemmSpec& s) { return s.transpose_b ? s.n : s.k; }

CublasLt::CublasLt() {
  STEPCAST_CUBLAS(cublasLtCreate(&m_handle));
  // Errors only (mask 1), into our buffer; a user's CUBLASLT_LOG_MASK / CUBLASLT_LOG_LEVEL wins.
  if (std::getenv("CUBLASLT_LOG_MASK") == nullptr && std::getenv("CUBLASLT_LOG_LEVEL") == nullptr) {
    cublasLtLoggerSetCallback(log_callback);
    cublasLtLoggerSetMask(1);
  }
}

CublasLt::~CublasLt() {
  if (m_handle != nullptr) cublasLtDestroy(m_handle);
}

std::string CublasLt::version() {
  const std::size_t v = cublasLtGetVersion();  // major * 10000 + minor * 100 + patch
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

GemmPlan::GemmPlan(const CublasLt& lt, const GemmSpec& s, const float* a_scale, const float* b_scale)
    : m_handle(lt.get()), m_compute(s.compute) {
  const bool fp8 = is_fp8(s.a) || is_fp8(s.b);
  m_fp8 = fp8;
  m_c_is_d = !fp8 || s.fp8_c_is_d;
  take_logged_errors();  // drop what earlier plans logged
  const bool int8 = s.a == ElementFormat::int8;
  if ((fp8 || int8) && !(s.transpose_a && !s.transpose_b)) {
    throw GemmUnsupported("cuBLASLt FP8 and INT8 GEMMs need the TN layout");
  }
  if (s.a == ElementFormat::e5m2 && s.b == ElementFormat::e5m2) {
    throw GemmUnsupported("cuBLASLt has no E5M2 x E5M2 GEMM");
  }
  const cublasComputeType_t compute = s.compute == GemmCompute::int32  ? CUBLAS_COMPUTE_32I
                                      : s.compute == GemmCompute::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                       : CUBLAS_COMPUTE_32F;
  const cudaDataType_t scale_type = s.compute == GemmCompute::int32 ? CUDA_R_32I : CUDA_R_32F;
  STEPCAST_CUBLAS(cublasLtMatmulDescCreate(&m_op, compute, scale_type));
  const cublasOperation_t op_a = s.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = s.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  STEPCAST_CUBLAS(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a));
  STEPCAST_CUBLAS(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b));
  if (fp8 && s.fp8_scale_pointers) {
    if (a_scale == nullptr || b_scale == nullptr) throw GemmUnsupported("FP8 GEMM needs device scale factors");
    STEPCAST_CUBLAS(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale, sizeof a_scale));
    STEPCAST_CUBLAS(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale, sizeof b_scale));
  }
  if (fp8) {
    const std::int8_t fast = s.fp8_fast_accumulation ? 1 : 0;
    STEPCAST_CUBLAS(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
  }
  // Stored shapes (rows x cols, column-major): A is k x m when transposed, else m x k.
  STEPCAST_CUBLAS(cublasLtMatrixLayoutCreate(&m_a, cuda_type(s.a), s.transpose_a ? s.k : s.m, s.transpose_a ? s.m : s.k,
                                             gemm_lda(s)));
  STEPCAST_CUBLAS(cublasLtMatrixLayoutCreate(&m_b, cuda_type(s.b), s.transpose_b ? s.n : s.k, s.transpose_b ? s.k : s.n,
                                             gemm_ldb(s)));
  STEPCAST_CUBLAS(cublasLtMatrixLayoutCreate(&m_c, cuda_type(s.c), s.m, s.n, s.m));
  if (s.batch > 1) {
    const auto count = static_cast<std::int32_t>(s.batch);
    const std::pair<cublasLtMatrixLayout_t, std::int64_t> layouts[] = {{m_a, static_cast<std::int64_t>(gemm_a_elements(s))},
                                                                       {m_b, static_cast<std::int64_t>(gemm_b_elements(s))},
                                                                       {m_c, static_cast<std::int64_t>(gemm_c_elements(s))}};
    for (const auto& [layout, stride] : layouts) {
      STEPCAST_CUBLAS(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
      STEPCAST_CUBLAS(
          cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
    }
  }

  cublasLtMatmulPreference_t preference = nullptr;
  STEPCAST_CUBLAS(cublasLtMatmulPreferenceCreate(&preference));
  const std::uint64_t max_workspace = kGemmWorkspaceBytes;
  STEPCAST_CUBLAS(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                       &max_workspace, sizeof max_workspace));
  cublasLtMatmulHeuristicResult_t results[kMaxAlgorithms] = {};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(m_handle, m_op, m_a, m_b, m_c, m_c, preference,
                                                               kMaxAlgorithms, results, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  for (int i = 0; i < found; ++i) {
    if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
    m_algo[m_offered] = results[i].algo;
    m_workspace[m_offered] = results[i].workspaceSize;
    m_waves[m_offered] = results[i].wavesCount;
    ++m_offered;
  }
  if (status != CUBLAS_STATUS_SUCCESS || m_offered == 0) {
    throw GemmUnsupported(std::string("cuBLASLt offers no algorithm (") + cublasLtGetStatusName(status) + ": " +
                          cublasLtGetStatusString(status) + ")" + take_logged_errors());
  }
}

GemmPlan::~GemmPlan() {
  if (m_c != nullptr) cublasLtMatrixLayoutDestroy(m_c);
  if (m_b != nullptr) cublasLtMatrixLayoutDestroy(m_b);
  if (m_a != nullptr) cublasLtMatrixLayoutDestroy(m_a);
  if (m_op != nullptr) cublasLtMatmulDescDestroy(m_op);
}

void GemmPlan::run(cudaStream_t stream, const void* a, const void* b, void* c, void* workspace) {
  const float alpha_f = 1.0f;
  const float beta_f = 0.0f;
  const std::int32_t alpha_i = 1;
  const std::int32_t beta_i = 0;
  const void* alpha = m_compute == GemmCompute::int32 ? static_cast<const void*>(&alpha_i) : &alpha_f;
  const void* beta = m_compute == GemmCompute::int32 ? static_cast<const void*>(&beta_i) : &beta_f;
  // beta = 0, so C is not read; an FP8 GEMM passes nullptr (PyTorch's scaled_gemm) or D's pointer
  // (Transformer Engine), as its spec says.
  const void* c_in = m_c_is_d ? c : nullptr;
  std::string refused;
  for (; m_chosen < m_offered; ++m_chosen) {
    const cublasStatus_t status = cublasLtMatmul(m_handle, m_op, alpha, a, m_a, b, m_b, beta, c_in, m_c, c, m_c,
                                                 &m_algo[m_chosen], workspace, m_workspace[m_chosen], stream);
    if (status == CUBLAS_STATUS_SUCCESS) return;
    if (status != CUBLAS_STATUS_NOT_SUPPORTED && status != CUBLAS_STATUS_INVALID_VALUE) {
      check_cublas(status, "cublasLtMatmul", __FILE__, __LINE__);
    }
    refused = std::string(cublasLtGetStatusName(status)) + ": " + cublasLtGetStatusString(status);
  }
  throw GemmUnsupported("cuBLASLt refused all " + std::to_string(m_offered) + " algorithms its heuristic offered (" +
                        refused + ")" + take_logged_errors());
}

}  // namespace stepcast::kernels
