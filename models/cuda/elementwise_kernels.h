// Fused CUDA kernels for the memory-bound elementwise parts of a decoder layer, behind
// models/fused_elementwise.h. Plain C++ interface (no LibTorch in the .cu file).
// Tensors contiguous unless a stride says otherwise, in one dtype (models/cuda/element_type.h);
// arithmetic in float32, one rounding per output.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "models/cuda/element_type.h"

namespace rollout::models::cuda {

// out [rows, width] = silu(gate) * up, gate/up [rows, width] with rows `in_stride`
// elements apart (column blocks of one gate/up product, or contiguous: width).
void LaunchSwigluForward(ElementType dtype, const void* gate, const void* up, int64_t rows,
                         int64_t width, int64_t in_stride, void* out, cudaStream_t stream);
// grad_gate = grad_out * up * silu'(gate), grad_up = grad_out * silu(gate); grad_out
// [rows, width] contiguous, grad_gate/grad_up rows `grad_stride` elements apart.
void LaunchSwigluBackward(ElementType dtype, const void* gate, const void* up,
                          const void* grad_out, int64_t rows, int64_t width, int64_t in_stride,
                          int64_t grad_stride, void* grad_gate, void* grad_up, cudaStream_t stream);

// Rotary embedding, "rotate half" layout: x [tokens, heads, dim] with tokens
// `x_token_stride` elements apart (heads and dims contiguous), cos/sin [tokens, dim],
// out [tokens, heads, dim] contiguous.
//   out[t, h, i] = x[t, h, i] * cos[t, i] + rotate_half(x)[t, h, i] * sin[t, i]
// With `backward`, applies the transpose (the gradient with respect to x).
void LaunchRope(ElementType dtype, const void* x, int64_t x_token_stride, const void* cos,
                const void* sin, int64_t tokens, int64_t heads, int64_t dim, bool backward,
                void* out, cudaStream_t stream);

// Backward of normed = RMSNorm(x) * weight over `rows` rows of `hidden` elements (all
// contiguous), x being what the forward normalised. With g = grad_normed and
// rstd = rsqrt(mean(x^2) + eps):
//   grad_x = rstd * g * weight - x * rstd^3 * mean(g * weight * x) + grad_sum
// where grad_sum (nullable) is the gradient reaching x from its other uses. When
// weight_grad_partials (float32 [RmsNormBackwardBlocks(rows), hidden]) is not null,
// row b of it gets block b's sum of g * x * rstd; their sum over blocks is weight's
// gradient. Only for RmsNormBackwardSupports(hidden).
bool RmsNormBackwardSupports(int64_t hidden);
int64_t RmsNormBackwardBlocks(int64_t rows);
void LaunchRmsNormBackward(ElementType dtype, const void* x, const void* weight,
                           const void* grad_normed, const void* grad_sum, int64_t rows,
                           int64_t hidden, float eps, void* grad_x,
                           float* weight_grad_partials, cudaStream_t stream);

}  // namespace rollout::models::cuda
