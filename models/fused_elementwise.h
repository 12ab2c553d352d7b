// Fused SwiGLU, rotary embedding and add + RMSNorm for CUDA tensors
// (models/cuda/elementwise_kernels.h), differentiable through custom autograd functions. Only in CUDA builds; the model uses
// the ATen formulation elsewhere. Each is one kernel per direction where the ATen
// formulation takes three to five.
#pragma once

#include <ATen/core/Tensor.h>

#include <utility>

namespace rollout::models {

// silu(gate) * up; gate and up of one shape and dtype on one CUDA device.
at::Tensor FusedSwiglu(const at::Tensor& gate, const at::Tensor& up);

// x [S..., heads, dim] rotated by cos/sin [S..., dim] (same dtype): see Rope::Apply.
at::Tensor FusedRope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

// {residual + delta, RMSNorm(residual + delta) * weight} as FusedAddRmsNorm
// (models/fused_decode.h) computes them, with gradients for residual, delta and weight
// (the backward is one kernel plus the weight gradient's sum over row blocks). An
// undefined delta gives {residual, RMSNorm(residual) * weight}. For tensors with
// DifferentiableAddRmsNormSupports(): CUDA, rows of at most 12288 elements.
bool DifferentiableAddRmsNormSupports(const at::Tensor& residual);
std::pair<at::Tensor, at::Tensor> DifferentiableAddRmsNorm(const at::Tensor& residual,
                                                           const at::Tensor& delta,
                                                           const at::Tensor& weight, double eps);

}  // namespace rollout::models
