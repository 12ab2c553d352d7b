// Fused CUDA kernels of the inference forward (CausalLM::ForwardStep without autograd),
// behind models/fused_decode.h: each replaces two to five kernels of the ATen
// formulation, because a decode step's tensors are small and its time goes to kernel
// count rather than bytes. Plain C++ interface (no LibTorch in the .cu file); dtypes
// from models/cuda/element_type.h, arithmetic in float32, one rounding per output.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "models/cuda/element_type.h"

namespace rollout::models::cuda {

// Per row r of `rows` rows of `hidden` elements (all contiguous):
//   with delta:    sum[r] = round(residual[r] + delta[r]), x = sum[r]
//   without (delta == nullptr, sum unused): x = residual[r]
//   normed[r] = x * rsqrt(mean(x^2) + eps) * weight
// — what `residual + delta` followed by an RMSNorm of the rounded sum computes.
void LaunchAddRmsNorm(ElementType dtype, const void* residual, const void* delta,
                      const void* weight, int64_t rows, int64_t hidden, float eps, void* sum,
                      void* normed, cudaStream_t stream);

// LaunchAddRmsNorm with delta = the sum of a split-K projection's float32 partial
// products, partials [splits, rows, hidden] contiguous, summed in slice order and
// rounded once to the dtype (so no separate reduction kernel runs).
void LaunchAddPartialsRmsNorm(ElementType dtype, const void* residual, const float* partials,
                              int64_t splits, const void* weight, int64_t rows, int64_t hidden,
                              float eps, void* sum, void* normed, cudaStream_t stream);

// Rotary embedding ("rotate half") of the query and key heads of a fused projection:
// row t of `qkv` (row stride `qkv_stride` elements) holds q_heads query heads, then
// kv_heads key heads (then the values, untouched), each `dim` wide; cos/sin [tokens,
// dim] contiguous. Writes q_out [tokens, q_heads, dim] and k_out [tokens, kv_heads,
// dim], contiguous — the values Rope::Apply gives for each.
void LaunchRopeQk(ElementType dtype, const void* qkv, int64_t qkv_stride, const void* cos,
                  const void* sin, int64_t tokens, int64_t q_heads, int64_t kv_heads, int64_t dim,
                  void* q_out, void* k_out, cudaStream_t stream);

// Qwen3's per-head RMSNorm of the query and key heads of a fused projection, in place:
// row t of `qkv` (row stride `qkv_stride` elements) holds q_heads query heads, then
// kv_heads key heads (then the values, untouched), each `dim` wide; each head x becomes
// x * rsqrt(mean(x^2) + eps) * weight, with q_weight [dim] for query heads and k_weight
// [dim] for key heads, rounded once.
void LaunchQkHeadRmsNorm(ElementType dtype, void* qkv, int64_t qkv_stride, const void* q_weight,
                         const void* k_weight, int64_t tokens, int64_t q_heads, int64_t kv_heads,
                         int64_t dim, float eps, cudaStream_t stream);

// out[t, i] = silu(gate_up[t, i]) * gate_up[t, width + i] for a fused gate/up
// projection gate_up [tokens, 2 * width] -> out [tokens, width], contiguous.
void LaunchSwigluHalves(ElementType dtype, const void* gate_up, int64_t tokens, int64_t width,
                        void* out, cudaStream_t stream);

}  // namespace rollout::models::cuda
