// Advantage estimators selected by `algorithm.adv_estimator`, with the semantics of
// verl's core_algos (compute_gae_advantage_return, compute_grpo_outcome_advantage, ...).
//
// Common contract for every function here:
// * token_level_rewards: [B, T] floating (float32 in practice). Results are [B, T] in
//   its dtype and on its device; every other input is moved/converted to match.
// * response_mask: [B, T], any dtype, 1 for response tokens and 0 for padding (or, in
//   multi-turn data, tool/observation tokens). Outcome scores are the rows' rewards
//   summed over T unmasked, as verl's are: a row's score counts in its group's statistics
//   even when the row has no unmasked token (a sample over-sampling aborted, whose score
//   verl's reward managers put in the last column). Advantages and returns are 0 at
//   masked tokens, and the token-level estimators (gae, reinforce_plus_plus) ignore the
//   rewards there.
// * index: [B] int64 group ids, one per row: rows sampled from the same prompt share an
//   id. verl groups by the `uid` strings of the batch; the controller maps each uid to an
//   integer (any values, not necessarily dense or sorted) before calling here.
// * InvalidArgument names the argument for a wrong shape or dtype, a missing input, an
//   unknown estimator name, and NaN/Inf in any floating input (CheckFinite).
// * No gradient flows through advantages (verl computes them under no_grad); callers
//   pass detached tensors.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rollout::algorithms {

// The `algorithm.*` keys that the estimators read, with verl's defaults.
struct AdvantageOptions {
  double gamma = 1.0;                   // algorithm.gamma: discount (gae, reinforce_plus_plus)
  double lam = 1.0;                     // algorithm.lam: GAE lambda
  bool norm_adv_by_std_in_grpo = true;  // algorithm.norm_adv_by_std_in_grpo; false: Dr.GRPO
  double epsilon = 1e-6;                // grpo's std guard (a function default in verl)
};

// What the estimators consume; each needs a subset (see ComputeAdvantages).
struct AdvantageInputs {
  at::Tensor token_level_rewards;  // [B, T] floating; every estimator
  at::Tensor response_mask;        // [B, T]; every estimator
  at::Tensor values;               // [B, T] floating critic values; gae
  at::Tensor index;                // [B] int64 group ids; the group-relative estimators
  at::Tensor reward_baselines;     // [B] floating greedy-rollout scores; remax
  // [B, T] floating: the actor's log-probs of the sampled tokens and the sums of squared
  // probabilities (actor.calculate_sum_pi_squared); the optimal_token_baseline estimators.
  at::Tensor old_log_probs;
  at::Tensor sum_pi_squared;
  // [B, T] floating, optional: the rollout correction's weights; the optimal_token_baseline
  // estimators weigh each token's energy by their square (algorithms/optimal_token_baseline.h).
  at::Tensor rollout_is_weights;
};

struct Advantages {
  at::Tensor advantages;  // [B, T]
  at::Tensor returns;     // [B, T]
};

// GAE before whitening: per row, walking t = T-1 .. 0,
//   delta_t = r_t + gamma * nextvalue - v_t;  gae_t = delta_t + gamma * lam * lastgae,
// and where mask_t = 1 nextvalue <- v_t, lastgae <- gae_t; where mask_t = 0 both carry
// through unchanged (so masked tokens are skipped, not treated as episode ends) and the
// output at t is the carried lastgae. Returns [B, T].
absl::StatusOr<at::Tensor> GaeRawAdvantages(const at::Tensor& token_level_rewards,
                                            const at::Tensor& values,
                                            const at::Tensor& response_mask, double gamma,
                                            double lam);

// verl's gae: returns = raw + values; advantages = MaskedWhiten(raw, response_mask)
// (masked positions hold whitened carried values; the policy loss masks them).
// InvalidArgument also when the mask selects fewer than two tokens (whitening).
absl::StatusOr<Advantages> GaeAdvantages(const at::Tensor& token_level_rewards,
                                         const at::Tensor& values, const at::Tensor& response_mask,
                                         double gamma, double lam);

// verl's grpo: s = outcome score per row; per group, mean and unbiased std (torch.std);
// a group of one uses mean 0 and std 1 (so its advantage is s / (1 + epsilon)).
// advantage = (s - mean) / (std + epsilon), or s - mean when !norm_adv_by_std_in_grpo,
// broadcast over T and multiplied by the mask. returns == advantages.
absl::StatusOr<Advantages> GrpoAdvantages(const at::Tensor& token_level_rewards,
                                          const at::Tensor& response_mask, const at::Tensor& index,
                                          bool norm_adv_by_std_in_grpo, double epsilon = 1e-6);

// verl's grpo_vectorized: grpo's advantages with its group statistics as verl's
// group_mean_std computes them, the std floored at sqrt(epsilon) (variance at least
// epsilon), so nearly equal scores are not blown up.
absl::StatusOr<Advantages> GrpoVectorizedAdvantages(const at::Tensor& token_level_rewards,
                                                    const at::Tensor& response_mask, const at::Tensor& index,
                                                    bool norm_adv_by_std_in_grpo, double epsilon = 1e-6);

// verl's rloo: in a group of n > 1, advantage = n / (n - 1) * (s - mean), i.e. s minus
// the mean of the other n - 1 scores; a group of one keeps s. Broadcast over T times
// the mask; returns == advantages.
absl::StatusOr<Advantages> RlooAdvantages(const at::Tensor& token_level_rewards,
                                          const at::Tensor& response_mask, const at::Tensor& index);

// verl's rloo_vectorized: rloo, but a group of one gets 0 (no other score to compare).
absl::StatusOr<Advantages> RlooVectorizedAdvantages(const at::Tensor& token_level_rewards,
                                                    const at::Tensor& response_mask, const at::Tensor& index);

// verl's gpg (GPG, arXiv 2504.02546): alpha (s - mean), where mean is the group's mean
// (0 for a group of one) and alpha = B / max(1, rows of the batch with a nonzero score),
// which scales the gradient up when few responses earn a reward. Broadcast over T times
// the mask; returns == advantages.
absl::StatusOr<Advantages> GpgAdvantages(const at::Tensor& token_level_rewards,
                                         const at::Tensor& response_mask, const at::Tensor& index);

// verl's opo (OPO, arXiv 2505.23585): s minus the group's length-weighted mean score,
// sum(l_i s_i) / sum(l_i) with l_i a row's response-token count (the optimal baseline for
// sequence-level rewards); a group of one, or one whose rows have no response tokens,
// keeps s. Broadcast over T times the mask; returns == advantages.
absl::StatusOr<Advantages> OpoAdvantages(const at::Tensor& token_level_rewards,
                                         const at::Tensor& response_mask, const at::Tensor& index);

// verl's grpo_passk (Pass@k training, arXiv 2503.19595): only each group's best row gets a
// nonzero advantage, its margin over the group's second-best score, divided by (the
// group's unbiased std + epsilon) when norm_adv_by_std_in_grpo. On a tie for the best the
// first such row (lowest index) is the best and its margin is 0. Broadcast over T times
// the mask; returns == advantages. InvalidArgument naming a row whose group has fewer
// than 2 rows.
absl::StatusOr<Advantages> GrpoPassKAdvantages(const at::Tensor& token_level_rewards,
                                               const at::Tensor& response_mask,
                                               const at::Tensor& index,
                                               bool norm_adv_by_std_in_grpo, double epsilon = 1e-6);

// verl's reinforce_plus_plus: returns_t = r_t + gamma * running, where the running
// return restarts at 0 after every masked token; advantages =
// MaskedWhiten(returns, mask) * mask. InvalidArgument when the mask selects fewer than
// two tokens.
absl::StatusOr<Advantages> ReinforcePlusPlusAdvantages(const at::Tensor& token_level_rewards,
                                                       const at::Tensor& response_mask,
                                                       double gamma);

// verl's reinforce_plus_plus_baseline: s minus its group mean (0 for a group of one),
// broadcast over T times the mask, then MaskedWhiten over the batch, times the mask.
// returns == advantages. InvalidArgument when the mask selects fewer than two tokens.
absl::StatusOr<Advantages> ReinforcePlusPlusBaselineAdvantages(
    const at::Tensor& token_level_rewards, const at::Tensor& response_mask,
    const at::Tensor& index);

// verl's remax: returns = reverse cumulative sum over T of rewards * mask (reward to go);
// advantages = returns - reward_baselines[b] * mask. reward_baselines: [B] floating,
// the score of each prompt's greedy rollout.
absl::StatusOr<Advantages> RemaxAdvantages(const at::Tensor& token_level_rewards,
                                           const at::Tensor& reward_baselines,
                                           const at::Tensor& response_mask);

// The names ComputeAdvantages accepts, in a fixed order: gae, grpo, rloo,
// reinforce_plus_plus, reinforce_plus_plus_baseline, remax, gpg, opo, grpo_passk,
// grpo_vectorized, rloo_vectorized, optimal_token_baseline, tir_optimal_token_baseline
// (algorithms/optimal_token_baseline.h).
const std::vector<std::string>& AdvantageEstimatorNames();

// Runs the estimator `adv_estimator` names (verl's names, above) on the inputs it needs;
// a needed input left undefined is InvalidArgument naming it. An unknown name is
// InvalidArgument listing the valid ones. Errors are prefixed with the estimator's name.
absl::StatusOr<Advantages> ComputeAdvantages(const std::string& adv_estimator,
                                             const AdvantageInputs& inputs,
                                             const AdvantageOptions& options);

}  // namespace rollout::algorithms
