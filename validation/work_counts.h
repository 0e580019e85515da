#pragma once
// The work (operations) and minimum memory traffic of each measured point: the FLOPs and bytes
// a measurement file records beside the time, so calibration can turn time into efficiency.
//
// Conventions (each function's comment gives its formula):
//   - GEMM: 2*m*n*k multiply-adds counted as two operations, times batch and groups; bytes = read
//     A and B once, write C once (the compulsory traffic; tiles re-read from L2 are not counted).
//   - Attention forward counts the two matmuls, 4*d FLOPs per (query, key) pair that is not
//     masked: causal counts only the unmasked pairs (about half), as FlashAttention-2's benchmark
//     does (Dao 2023, Sec. 4.1). Backward is 2.5x the forward (five matmuls against two, same
//     paper). Decode is the forward with seq_q = 1 per sequence. Softmax and scaling are not counted.
//   - Elementwise kernels and memory kernels: FLOPs are not counted (0); bytes are each input
//     read once plus each output written once.
// Units: operations and bytes.

#include <cstdint>

#include "model/units.h"
#include "validation/measurement.h"

namespace stepcast {

// Bytes of one element of a GEMM operand format ("bf16" -> 2, "e4m3" -> 1, "int32" -> 4).
double format_bytes(std::string_view format);

Flops gemm_flops(const GemmInputs& g);
Bytes gemm_bytes(const GemmInputs& g);

// Unmasked (query, key) pairs per (batch, head). Causal masking aligns the last query with the
// last key (bottom-right, as in decoding with a prefix): query i sees keys
// 0 .. i + (seq_kv - seq_q).
double attention_pairs(std::int64_t seq_q, std::int64_t seq_kv, bool causal);
Flops attention_flops(const AttentionInputs& a);
Bytes attention_bytes(const AttentionInputs& a);

Bytes elementwise_bytes(const ElementwiseInputs& e);
Bytes memory_bytes(const MemoryInputs& m);

}  // namespace stepcast
