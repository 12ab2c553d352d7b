// The differences between the LibTorch versions we build against — Debian 12's 1.13
// (CPU, CI) and PyTorch 2.x (CUDA, GPU hosts) — in one place. Code elsewhere calls
// these and never tests TORCH_VERSION itself.
//
// Not an API difference but a platform one, kept where it bites: PyTorch 2.x wheels
// export their own std::filesystem symbols, so the project uses common/file_util.h.
#pragma once

#include <ATen/ATen.h>
#include <torch/version.h>

#include <optional>
#include <vector>

namespace rollout::compat {

// Attention for q [B, Hq, Tq, D], k/v [B, Hkv, Tk, D] (Hq a multiple of Hkv: grouped
// query attention). `additive_mask` (optional, broadcastable to [B, Hq, Tq, Tk], the
// query dtype, 0 where allowed and a large negative value where not) or `causal`
// (query i sees keys up to i + Tk - Tq). Returns [B, Hq, Tq, D]. Softmax runs in
// float32 on the fallback path, like PyTorch's math kernel.
// 2.x: at::scaled_dot_product_attention (flash / memory-efficient kernels on GPU).
// 1.13: the same computation written out.
at::Tensor ScaledDotProductAttention(const at::Tensor& q, const at::Tensor& k,
                                     const at::Tensor& v,
                                     const std::optional<at::Tensor>& additive_mask, bool causal,
                                     double scale);

// HF's RMSNorm: x * rsqrt(mean(x^2) + eps) computed in float32, cast back to x's dtype,
// times weight. On CUDA with LibTorch >= 2.4: the fused at::rms_norm kernel (it applies
// the weight before the final cast, a rounding difference far below bf16 noise).
at::Tensor RmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps);

// One Adam step with bias correction over every tensor in `params` with its gradient
// and state, in place: weight decay decoupled from the gradient (torch.optim.AdamW) or,
// with `decoupled_weight_decay` false, weight_decay x param added to the gradient
// before the moments (torch.optim.Adam; the gradients themselves are left as they are).
// `steps` are float32 scalar tensors (one per parameter, on its device) counting steps
// taken; they are incremented here. 2.x on CUDA: PyTorch's fused multi-tensor kernels;
// otherwise a per-tensor loop with the same arithmetic.
void AdamStep(const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
              const std::vector<at::Tensor>& exp_avgs, const std::vector<at::Tensor>& exp_avg_sqs,
              const std::vector<at::Tensor>& steps, double lr, double beta1, double beta2, double eps,
              double weight_decay, bool decoupled_weight_decay);

// Causal attention over packed segments of different lengths: q [Nq, Hq, D], k/v
// [Nk, Hkv, D] (Hq a multiple of Hkv); segment s has queries [q_offsets[s],
// q_offsets[s + 1]) and keys [k_offsets[s], k_offsets[s + 1]) (offsets int32 [S + 1] on
// q's device; at most max_q queries and max_k keys a segment). Its last query is aligned
// with its last key: query i of Lq sees keys j <= i + Lk - Lq (Lk = Lq: plain causal; Lk
// > Lq: the first Lk - Lq keys are a prefix every query sees). Returns [Nq, Hq, D],
// differentiable. FlashAttention's variable-length kernel, for CUDA tensors in bfloat16
// or float16 with head_dim a multiple of 8 up to 256, in LibTorch >= 2.5:
// VariableLengthAttentionAvailable() is false in older versions, where the call throws.
bool VariableLengthAttentionAvailable();
at::Tensor VariableLengthCausalAttention(const at::Tensor& q, const at::Tensor& k,
                                         const at::Tensor& v, const at::Tensor& q_offsets,
                                         const at::Tensor& k_offsets, int64_t max_q,
                                         int64_t max_k, double scale);

// a [B, M, K] x b [B, K, N] (bfloat16 or float16 on CUDA) -> float32 [B, M, N] from one
// batched GEMM accumulating in float32: at::bmm with out_dtype, LibTorch >= 2.8. Older
// versions have no such kernel: BmmToFloatAvailable() is false and BmmToFloat throws.
bool BmmToFloatAvailable();
at::Tensor BmmToFloat(const at::Tensor& a, const at::Tensor& b);

}  // namespace rollout::compat
