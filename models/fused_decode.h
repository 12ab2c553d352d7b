// The inference forward's fused CUDA kernels (models/cuda/decode_kernels.h) for
// LibTorch tensors: CausalLM::ForwardStep takes them on CUDA tensors while autograd is
// off. No autograd: callers must not need gradients through them. Only in CUDA builds.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <utility>

namespace rollout::models {

// residual, delta [N, H] and weight [H] of one dtype on one CUDA device -> {sum,
// normed}: sum = residual + delta (rounded to the dtype) and normed = RMSNorm(sum).
// With an undefined delta, sum is residual itself and normed = RMSNorm(residual).
std::pair<at::Tensor, at::Tensor> FusedAddRmsNorm(const at::Tensor& residual,
                                                  const at::Tensor& delta,
                                                  const at::Tensor& weight, double eps);

// FusedAddRmsNorm with delta = the sum over the first dimension of partials [S, N, H]
// float32 (a split-K product, models/split_k_linear.h), summed in slice order and
// rounded once to the dtype.
std::pair<at::Tensor, at::Tensor> FusedAddPartialsRmsNorm(const at::Tensor& residual,
                                                          const at::Tensor& partials,
                                                          const at::Tensor& weight, double eps);

// qkv [N, (q_heads + 2 * kv_heads) * dim] (a fused q/k/v projection, rows of unit
// column stride), cos/sin [N, dim] -> {q [N, q_heads, dim], k [N, kv_heads, dim]}
// rotated, contiguous.
std::pair<at::Tensor, at::Tensor> FusedRopeQk(const at::Tensor& qkv, const at::Tensor& cos,
                                              const at::Tensor& sin, int64_t q_heads,
                                              int64_t kv_heads, int64_t dim);

// qkv [N, (q_heads + 2 * kv_heads) * dim] (a fused q/k/v projection, rows of unit
// column stride) with each query head RMS-normalised with q_weight [dim] and each key
// head with k_weight [dim], in place (Qwen3's q_norm / k_norm); returns qkv.
at::Tensor FusedQkHeadRmsNorm_(const at::Tensor& qkv, const at::Tensor& q_weight,
                               const at::Tensor& k_weight, int64_t q_heads, int64_t kv_heads,
                               int64_t dim, double eps);

// gate_up [N, 2 * width] (a fused gate/up projection) -> silu(gate) * up [N, width].
at::Tensor FusedSwigluHalves(const at::Tensor& gate_up);

// Whether FusedGateUpSwiglu takes x [..., in] and gate_up_weight [2 * width, in]: both
// bfloat16 on a compute capability 9.0 GPU, 16-byte aligned, and sizes and a row count
// its kernel handles faster than a GEMM plus FusedSwigluHalves
// (models/cuda/swiglu_gemm_kernels.h).
bool FusedGateUpSwigluApplies(const at::Tensor& x, const at::Tensor& gate_up_weight);

// x [..., in] and gate_up_weight [2 * width, in] (gate rows, then up rows, no bias) ->
// silu(x gate^T) * (x up^T) [..., width] in one kernel: the products stay float32 up to
// the activation, which is rounded once (the two-kernel path rounds them first).
at::Tensor FusedGateUpSwiglu(const at::Tensor& x, const at::Tensor& gate_up_weight);

// Whether DecodeLinear (slices == 1) or DecodeLinearPartials takes x [..., in], weight
// [out, in] and bias ([out] or undefined; DecodeLinear only): bfloat16 on one compute
// capability 9.0 GPU, 16-byte aligned, with the row counts and sizes
// models/cuda/decode_gemm_kernels.h handles faster than cuBLAS.
bool DecodeLinearApplies(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                         int64_t slices);

// at::linear(x, weight, bias) -> [..., out] by the decode step's GEMM: float32 products,
// the bias added before the one rounding.
at::Tensor DecodeLinear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// How the decode step's GEMM takes x [..., in] times weight [out, in]^T (no bias): 1 in
// one run (DecodeLinear), 2, 4 or 8 in that many split-K slices (DecodeLinearPartials),
// the fewest that keep each slice's run short; 0 where it does not apply.
int64_t DecodeLinearSlices(const at::Tensor& x, const at::Tensor& weight);

// SplitKPartials(x, weight, slices) (models/split_k_linear.h: float32 [slices, rows, out])
// by the decode step's GEMM.
at::Tensor DecodeLinearPartials(const at::Tensor& x, const at::Tensor& weight, int64_t slices);

}  // namespace rollout::models
