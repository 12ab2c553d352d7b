// Token log-probs, entropies and sums of squared probabilities from logits with the fused CUDA kernels of
// models/cuda/token_scores_kernels.h, differentiable through a custom autograd function.
// Only in CUDA builds (ROLLOUT_WITH_CUDA); models/token_scores.h picks it for CUDA
// tensors and uses plain ATen otherwise.
//
// Against log_softmax + gather this never materialises float32 [rows, vocab] tensors:
// the forward reads the logits once, the backward reads them once more and writes the
// gradient in the logits' dtype.
#pragma once

#include <ATen/core/Tensor.h>

#include "models/token_scores.h"

namespace rollout::models {

// logits [rows, vocab] (float32, bfloat16 or float16) and targets [rows] int64 on one
// CUDA device. Returns log_probs, entropy and sum_pi_squared, each [rows] float32, all
// three defined; sum_pi_squared carries no gradient.
TokenScores FusedTokenScores(const at::Tensor& logits, const at::Tensor& targets);

}  // namespace rollout::models
