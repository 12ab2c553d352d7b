// Fused CUDA kernels for the memory-bound elementwise parts of a decoder layer, behind
// models/fused_elementwise.h. Plain C++ interface (no LibTorch in the .cu file).
// All tensors contiguous, in one dtype (models/cuda/element_type.h);
// arithmetic in float32, one rounding per output.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "models/cuda/element_type.h"

namespace rollout::models::cuda {

// out = silu(gate) * up, over `count` elements.
void LaunchSwigluForward(ElementType dtype, const void* gate, const void* up, int64_t count,
                         void* out, cudaStream_t stream);
// grad_gate = grad_out * up * silu'(gate), grad_up = grad_out * silu(gate).
void LaunchSwigluBackward(ElementType dtype, const void* gate, const void* up,
                          const void* grad_out, int64_t count, void* grad_gate, void* grad_up,
                          cudaStream_t stream);

// Rotary embedding, "rotate half" layout: x [tokens, heads, dim], cos/sin [tokens, dim].
//   out[t, h, i] = x[t, h, i] * cos[t, i] + rotate_half(x)[t, h, i] * sin[t, i]
// With `backward`, applies the transpose (the gradient with respect to x).
void LaunchRope(ElementType dtype, const void* x, const void* cos, const void* sin,
                int64_t tokens, int64_t heads, int64_t dim, bool backward, void* out,
                cudaStream_t stream);

}  // namespace rollout::models::cuda
