// Truncated importance sampling against the rollout's own log-probs (verl's
// algorithm.rollout_correction.rollout_is, from "When Speed Kills Stability", Liu, Li
// et al. 2025): the rollout engine samples with its own numerics (bfloat16 decode
// kernels), so the policy that generated a response is not exactly the one the PPO
// ratio anchors to. Each token's policy-gradient loss is weighted by
//   token:    w_t = min(exp(clamp(old_t - rollout_t, -20, 20)), threshold)
//   sequence: w_b = min(exp(clamp(sum_t (old_t - rollout_t), -20, 20)), threshold),
//             the same for every token of row b
// where old is the log-prob the ratio anchors to and rollout the engine's; the weights
// carry no gradient and are 0 where the response mask is.
//
// Inputs, all [B, T] on one device: old_log_prob and rollout_log_prob floating;
// response_mask any dtype, 1 for tokens that count.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "absl/status/statusor.h"

namespace rollout::algorithms {

struct RolloutIsOptions {
  std::string level;       // "token" or "sequence"
  double threshold = 2.0;  // the weights' upper bound (rollout_is_threshold), > 0
};

struct RolloutIsWeights {
  at::Tensor weights;  // [B, T] float32, detached
  // Metrics, 0-dim float64 on the inputs' device (verl's rollout_corr/ names), over the
  // masked tokens (token level) or the rows with a masked token (sequence level):
  at::Tensor mean;            // rollout_is_mean: of the weights as applied (truncated)
  at::Tensor max;             // rollout_is_max: of the ratios before truncation
  at::Tensor min;             // rollout_is_min
  at::Tensor fraction_high;   // rollout_is_ratio_fraction_high: ratios above threshold
  at::Tensor kl;              // kl: mean of rollout - old, KL(rollout || old) per token
  at::Tensor k3_kl;           // k3_kl: mean of exp(d) - d - 1, d = old - rollout
};

// InvalidArgument for an unknown level, a threshold that is not > 0, or inputs that
// fail CheckTokenLossInputs (shape, dtype, device, NaN / Inf).
absl::StatusOr<RolloutIsWeights> ComputeRolloutIsWeights(const at::Tensor& old_log_prob,
                                                         const at::Tensor& rollout_log_prob,
                                                         const at::Tensor& response_mask,
                                                         const RolloutIsOptions& options);

}  // namespace rollout::algorithms
