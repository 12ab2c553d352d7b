// Fused SwiGLU and rotary embedding for CUDA tensors (models/cuda/elementwise_kernels.h),
// differentiable through custom autograd functions. Only in CUDA builds; the model uses
// the ATen formulation elsewhere. Each is one kernel per direction where the ATen
// formulation takes three to five.
#pragma once

#include <ATen/core/Tensor.h>

namespace rollout::models {

// silu(gate) * up; gate and up of one shape and dtype on one CUDA device.
at::Tensor FusedSwiglu(const at::Tensor& gate, const at::Tensor& up);

// x [S..., heads, dim] rotated by cos/sin [S..., dim] (same dtype): see Rope::Apply.
at::Tensor FusedRope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

}  // namespace rollout::models
