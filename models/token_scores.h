// Per-token log-probabilities (and entropies, sums of squared probabilities) of a causal
// LM's outputs, computed from final hidden states chunk by chunk so the float32 logits
// of the whole batch never exist at once (verl's logprobs_from_logits /
// entropy_from_logits / calculate_sum_pi_squared_from_logits, fused with the LM head).
// On CUDA the log-softmax, gather, entropy and squared-probability sum are one fused
// kernel per direction (models/fused_token_scores.h); with autograd on, each chunk keeps
// only its logits (in the model dtype) until backward.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "models/causal_lm.h"

namespace rollout::models {

struct TokenScores {
  at::Tensor log_probs;       // [B, T] float32: log p(targets[b, t] | hidden[b, t])
  at::Tensor entropy;         // [B, T] float32, or undefined when not asked for
  at::Tensor sum_pi_squared;  // [B, T] float32 sum over the vocabulary of p^2, or undefined
};

// What ScoreTokens computes besides the log-probs.
struct ScoreExtras {
  bool entropy = false;
  // verl's sum_pi_squared (actor.calculate_sum_pi_squared); never differentiable.
  bool sum_pi_squared = false;
};
inline constexpr ScoreExtras kLogProbsOnly{};
inline constexpr ScoreExtras kWithEntropy{/*entropy=*/true};

// hidden [B, T, H] (from CausalLM::Forward), targets [B, T] int64. Logits are computed in
// the model dtype (and divided by `temperature` there, as verl does when scoring
// rollouts), the log-softmax in float32, `chunk_tokens` positions at a time.
TokenScores ScoreTokens(const CausalLM& model, const at::Tensor& hidden, const at::Tensor& targets,
                        ScoreExtras extras, double temperature = 1.0, int64_t chunk_tokens = 4096);

// The fields `extras` asks for (and log_probs), each the concatenation along dim 0 of
// `parts`' (chunks or micro-batches, in order); each is `empty` when there are no parts.
TokenScores ConcatScores(const std::vector<TokenScores>& parts, ScoreExtras extras, const at::Tensor& empty);

}  // namespace rollout::models
