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

}  // namespace rollout::compat
