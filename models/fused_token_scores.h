// Token log-probs and entropies from logits with the fused CUDA kernels of
// models/cuda/token_scores_kernels.h, differentiable through a custom autograd function.
// Only in CUDA builds (ROLLOUT_WITH_CUDA); models/token_scores.h picks it for CUDA
// tensors and uses plain ATen otherwise.
//
// Against log_softmax + gather this never materialises float32 [rows, vocab] tensors:
// the forward reads the logits once, the backward reads them once more and writes the
// gradient in the logits' dtype.
#pragma once

#include <ATen/core/Tensor.h>

#include <utility>

namespace rollout::models {

// logits [rows, vocab] (float32, bfloat16 or float16) and targets [rows] int64 on one
// CUDA device. Returns (log_probs, entropy), each [rows] float32.
std::pair<at::Tensor, at::Tensor> FusedTokenScores(const at::Tensor& logits,
                                                   const at::Tensor& targets);

}  // namespace rollout::models
