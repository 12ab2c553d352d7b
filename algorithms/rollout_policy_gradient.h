// verl's rollout-correction policy gradient (algorithm.rollout_correction.use_policy_gradient
// with bypass_mode; verl's loss_mode "rollout_correction"): REINFORCE without PPO's ratio
// or clip, anchored to the rollout's own log-probs, with the importance weights and the
// rejection of rollout_correction.h computed for each micro-batch between the policy being
// trained (its log-probs, detached) and the rollout's:
//
//   l = -A w log_prob   on the tokens the rejection keeps (w = 1 without rollout_is),
//
// aggregated by loss_agg_mode over those tokens. Inputs, all [B, T] on one device:
// rollout_log_prob and log_prob (gradients flow here) and advantages floating and finite;
// response_mask any dtype, 1 for the tokens that count.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "algorithms/policy_loss.h"
#include "algorithms/rollout_correction.h"

namespace rollout::algorithms {

struct RolloutPolicyGradientOptions {
  std::optional<RolloutIsOptions> importance;        // rollout_is; none: every weight 1
  std::optional<RolloutRejectionOptions> rejection;  // rollout_rs and the veto; none: keep all
  std::string loss_agg_mode = "token-mean";          // see loss_aggregation.h
  double loss_scale_factor = 0;
};

struct RolloutPolicyGradient {
  // pg_clipfrac and pg_clipfrac_lower 0 (nothing is clipped); ppo_kl the mean over the
  // kept tokens of rollout_log_prob - log_prob, as verl reports it.
  PolicyLossResult loss;
  // rollout_corr/* (NamedMetrics) of the weights and the rejection that were computed.
  std::vector<std::pair<std::string, at::Tensor>> metrics;
};

// InvalidArgument for inputs that fail CheckTokenLossInputs, a bad loss_agg_mode, or
// options ComputeRolloutIsWeights / ComputeRolloutRejection refuse.
absl::StatusOr<RolloutPolicyGradient> ComputeRolloutPolicyGradient(const at::Tensor& rollout_log_prob,
                                                                   const at::Tensor& log_prob,
                                                                   const at::Tensor& advantages,
                                                                   const at::Tensor& response_mask,
                                                                   const RolloutPolicyGradientOptions& options);

}  // namespace rollout::algorithms
