// The controller's arithmetic in one PPO / GRPO step, between the worker calls of
// verl's RayPPOTrainer.fit: reward scores into token-level scores, the KL penalty in
// the reward, the advantage estimator, and verl's data metrics. Works on the step's
// Batch (verl's column names); pure computation, no I/O.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "algorithms/advantages.h"
#include "algorithms/kl_controller.h"
#include "common/batch.h"
#include "proto/recipe.pb.h"

namespace rollout::controller {

// [N] int64 group ids for the rows' uid strings: equal uids, equal ids (numbered in the
// order they first appear).
at::Tensor GroupIds(const std::vector<std::string>& uids);

// token_level_scores [N, R] float32: each row's score at its last counted token (response_mask; verl's
// reward managers), zeros elsewhere. A row with no counted token (a sample over-sampling
// aborted) has its score in the last column, where verl's index -1 puts it, so that the
// outcome estimators and critic/score count it as verl's do. InvalidArgument when the
// counts differ; with R = 0 the scores are nowhere.
absl::StatusOr<at::Tensor> TokenLevelScores(const std::vector<double>& scores,
                                            const at::Tensor& response_mask);

struct AdvantageStep {
  std::string adv_estimator = "grpo";
  algorithms::AdvantageOptions options;
  bool use_kl_in_reward = false;
  std::string kl_penalty = "kl";
  algorithms::KlController* kl_controller = nullptr;  // required with use_kl_in_reward
};

// Adds token_level_rewards (the scores, minus the KL penalty with use_kl_in_reward),
// advantages and returns to `batch`, which must hold token_level_scores, response_mask,
// the string column uid (rows of one prompt share it), and as the estimator needs
// values (gae) or old_log_probs + ref_log_prob (KL in reward). Returns the KL metrics
// (actor/reward_kl_penalty, actor/reward_kl_penalty_coeff) when it applied the penalty.
absl::StatusOr<std::map<std::string, double>> ComputeAdvantageColumns(const AdvantageStep& step,
                                                                      Batch* batch);

// With algorithm.use_pf_ppo, redraws `batch`'s rows with replacement in proportion to
// PF-PPO's weights of their scores (the sum of token_level_scores; algorithms/pf_ppo.h),
// from a generator seeded by `seed` and `step`, so a resumed run draws the same rows;
// nothing otherwise. InvalidArgument for a bad algorithm.pf_ppo.
absl::Status ResampleForPfPpo(const config::AlgorithmConfig& algorithm, uint64_t seed, int64_t step, Batch* batch);

// Whether algorithm.rollout_correction weighs or rejects by the rollout's log-probs
// (rollout_is, rollout_rs or the veto): the step then needs every row's old log-probs
// before the update.
bool CorrectsForRolloutLogProbs(const config::RolloutCorrectionConfig& correction);

// InvalidArgument naming the keys when algorithm.rollout_correction asks for a
// correction with bypass_mode but not use_policy_gradient (every ratio would be 1), for
// use_policy_gradient without bypass_mode, or when rollout_rs's bounds are not
// 0 < lower < upper once defaulted.
absl::Status CheckRolloutCorrection(const config::RolloutCorrectionConfig& correction);

// algorithm.rollout_correction (algorithms/rollout_correction.h, from old_log_probs to
// rollout_log_probs): with rollout_is adds rollout_is_weights [N, R] float32 to `batch`
// for the actor's update, with rollout_rs or the veto replaces response_mask by the
// tokens kept, and adds the metrics as rollout_corr/{rollout_is_mean, rollout_is_max,
// rollout_is_min, rollout_is_ratio_fraction_high, kl, k3_kl} and
// rollout_corr/{rollout_rs_masked_fraction, rollout_rs_seq_masked_fraction,
// rollout_is_veto_fraction, rollout_is_catastrophic_token_fraction}. Nothing unless
// CorrectsForRolloutLogProbs. Every row's old log-probs must be there (none NaN).
absl::Status ApplyRolloutCorrection(const config::RolloutCorrectionConfig& correction, Batch* batch,
                                    std::map<std::string, double>* metrics);

// verl's compute_data_metrics: critic/score/{mean,max,min}, critic/rewards/...,
// critic/advantages/..., critic/returns/... (and with values critic/values/... and
// critic/vf_explained_var = 1 - var(returns - values) / (var(returns) + 1e-5); 0 for
// fewer than two response tokens),
// response_length/{mean,max,min,clip_ratio}, prompt_length/{mean,max,min,clip_ratio}
// (and with multi-turn rollouts num_turns/{min,max,mean}),
// over the unmasked tokens / rows of `batch` (which must hold the columns that
// ComputeAdvantageColumns adds, plus attention_mask and prompts).
absl::StatusOr<std::map<std::string, double>> DataMetrics(const Batch& batch);

// verl's variance_proxy/* metrics (algorithms/variance_proxy.h) of a batch whose actor
// computed sum_pi_squared, after the update (`step_metrics`' actor/grad_norm, when there,
// is the signal strength's gradient norm); none without a sum_pi_squared column.
absl::StatusOr<std::map<std::string, double>> VarianceProxyMetrics(
    const Batch& batch, const std::map<std::string, double>& step_metrics);

}  // namespace rollout::controller
