// Corrections for the gap between the rollout's own log-probs and the old log-probs the
// PPO ratio anchors to (verl's algorithm.rollout_correction, from "When Speed Kills
// Stability", Liu, Li et al. 2025): the rollout engine samples with its own numerics
// (bfloat16 decode kernels), so the policy that generated a response is not exactly
// the one the ratio anchors to.
//
// Truncated importance sampling (rollout_is): each token's policy-gradient loss is
// weighted by
//   token:    w_t = min(exp(clamp(old_t - rollout_t, -20, 20)), threshold)
//   sequence: w_b = min(exp(clamp(sum_t (old_t - rollout_t), -20, 20)), threshold),
//             the same for every token of row b
// optionally divided by their mean over the batch (the masked tokens', or the rows'
// with a masked token), so that they average 1
// where old is the log-prob the ratio anchors to and rollout the engine's; the weights
// carry no gradient and are 0 where the response mask is.
//
// Rejection sampling (rollout_rs) and the veto: tokens or responses whose ratio falls
// outside [lower, upper] leave the response mask — the loss and its normalisation —
// by level:
//   token:     the token's ratio exp(clamp(d_t, -20, 20)), d = old - rollout
//   sequence:  the response's product exp(clamp(sum_t d_t, -20, 20)), all its tokens
//   geometric: the response's geometric mean exp(clamp(mean_t d_t, -20, 20))
// and with a veto threshold every response holding a token whose unbounded ratio
// exp(d_t) is below it.
//
// Inputs, all [B, T] on one device: old_log_prob and rollout_log_prob floating;
// response_mask any dtype, 1 for tokens that count.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace rollout::algorithms {

struct RolloutIsOptions {
  std::string level;       // "token" or "sequence"
  double threshold = 2.0;  // the weights' upper bound (rollout_is_threshold), > 0
  bool batch_normalize = false;  // rollout_is_batch_normalize: divide by the weights' mean
};

struct RolloutIsWeights {
  at::Tensor weights;  // [B, T] float32, detached
  // Metrics, 0-dim float64 on the inputs' device (verl's rollout_corr/ names), over the
  // masked tokens (token level) or the rows with a masked token (sequence level):
  at::Tensor mean;            // rollout_is_mean: of the weights as applied (truncated, normalised)
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

struct RolloutRejectionOptions {
  std::string level;          // "token", "sequence", "geometric", or "" (veto only)
  double upper = 2.0;         // rollout_rs_threshold
  double lower = 0.5;         // rollout_rs_threshold_lower, < upper
  double veto_threshold = 0;  // rollout_token_veto_threshold; 0: no veto
};

struct RolloutRejection {
  at::Tensor keep;  // [B, T] float32: 1 where the token still counts (a subset of the mask)
  // Metrics, 0-dim float64 (verl's rollout_corr/ names):
  at::Tensor masked_fraction;      // rollout_rs_masked_fraction: masked tokens rejected by level
  at::Tensor seq_masked_fraction;  // rollout_rs_seq_masked_fraction: responses with a token rejected so
  at::Tensor veto_fraction;        // rollout_is_veto_fraction: responses vetoed
  at::Tensor catastrophic_token_fraction;  // rollout_is_catastrophic_token_fraction
};

// InvalidArgument for an unknown level, thresholds that are not 0 < lower < upper (with
// a level), a negative veto threshold, or inputs that fail CheckTokenLossInputs.
absl::StatusOr<RolloutRejection> ComputeRolloutRejection(const at::Tensor& old_log_prob,
                                                         const at::Tensor& rollout_log_prob,
                                                         const at::Tensor& response_mask,
                                                         const RolloutRejectionOptions& options);

// The metrics above under verl's names (rollout_corr/rollout_is_mean, ...), in the order
// they are declared.
std::vector<std::pair<std::string, at::Tensor>> NamedMetrics(const RolloutIsWeights& weights);
std::vector<std::pair<std::string, at::Tensor>> NamedMetrics(const RolloutRejection& rejection);

}  // namespace rollout::algorithms
