// CUDA kernels behind models/fused_token_scores.h, with a plain C++ interface (no
// LibTorch in the .cu file, so nvcc never parses ATen).
//
// Forward, one thread block per row of logits [rows, vocab]: one pass computes the
// row's log-sum-exp, the target's log-prob, the entropy and the sum of squared
// probabilities in float32 (online softmax).
// Backward writes d/dlogits of  g_logp * log_probs + g_entropy * entropy  in the
// logits' dtype, recomputing the softmax from the saved log-sum-exp — no float32
// [rows, vocab] buffer ever exists. Both are bound by HBM bandwidth: they move the
// logits in 16-byte packs, two a thread in flight, where the vocabulary and the
// addresses allow it (one element at a time otherwise).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "models/cuda/element_type.h"

namespace rollout::models::cuda {

// logits [rows, vocab] contiguous; targets [rows] in [0, vocab).
// Outputs [rows] float32: log_probs, lse (log-sum-exp, kept for backward), entropy,
// sum_pi_squared (sum over the vocabulary of p^2).
void LaunchTokenScoresForward(ElementType dtype, const void* logits, const int64_t* targets,
                              int64_t rows, int64_t vocab, float* log_probs, float* lse,
                              float* entropy, float* sum_pi_squared, cudaStream_t stream);

// grad_log_probs / grad_entropy [rows] float32, either may be null (zero gradient).
// grad_logits [rows, vocab] in `dtype`, fully written.
void LaunchTokenScoresBackward(ElementType dtype, const void* logits, const int64_t* targets,
                               const float* lse, const float* entropy,
                               const float* grad_log_probs, const float* grad_entropy,
                               int64_t rows, int64_t vocab, void* grad_logits,
                               cudaStream_t stream);

}  // namespace rollout::models::cuda
