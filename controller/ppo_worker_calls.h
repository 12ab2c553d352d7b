// The worker calls of one PPO / GRPO step (verl's RayPPOTrainer.fit between gen and
// the metrics): each sends the columns its method takes, data-parallel over the
// group, and folds the reply into the step's batch or metrics. `batch` is the step's
// Batch in verl's column names; a missing column is NotFound naming it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/batch.h"
#include "common/recipe_loader.h"
#include "controller/worker_group.h"

namespace rollout::controller {

// The sequence columns every scoring and training method takes: input_ids,
// attention_mask, position_ids, responses, response_mask.
const std::vector<std::string>& SequenceColumns();

// Rows at the start of each actor rank's shard whose old log-probs the update takes
// from its own forward (meta on_policy_rows of actor.update_actor): the rank's share of
// the first mini-batch, which with ppo_epochs 1 is trained before any optimizer step,
// under the weights that sampled it, so scoring it beforehand would repeat that
// forward (verl's on_policy case; TRL skips it with num_iterations 1). 0 when the step
// needs the old log-probs before the update (algorithm.use_kl_in_reward,
// algorithm.rollout_correction's weights and rejections, or PF-PPO's resampling and
// actor.shuffle, which move rows across mini-batches, or every row's sum_pi_squared:
// actor.calculate_sum_pi_squared), takes them from the rollout (bypass mode) or trains
// more epochs. `world`: the actor's ranks.
int64_t OnPolicyRowsPerRank(const config::Recipe& recipe, int world);

// actor.compute_log_prob on every row but the first `on_policy_rows` of each rank's
// shard (OnPolicyRowsPerRank): adds old_log_probs [N, R] (and sum_pi_squared [N, R]
// when the actor computes it), NaN in the rows not scored; returns actor/entropy, the
// mean entropy over the scored rows' response tokens, or nullopt when no row was
// scored. InvalidArgument when the rows do not split evenly over the group or a shard
// has fewer than `on_policy_rows` rows.
absl::StatusOr<std::optional<double>> ComputeOldLogProbs(WorkerGroup& policy, int64_t on_policy_rows,
                                                         Batch* batch);

// ref.compute_ref_log_prob: adds ref_log_prob [N, R].
absl::Status ComputeRefLogProbs(WorkerGroup& policy, Batch* batch);

// critic.compute_values: adds values [N, R].
absl::Status ComputeValues(WorkerGroup& critic, Batch* batch);

// reward_model.compute_rm_score on the sequences, with `prompts`' string columns prompt
// and prompt_format (one row per sequence, as the rollout was asked) for a reward model
// that re-renders them: each row's score. InvalidArgument when the reply's rm_scores
// are not one per row.
absl::StatusOr<std::vector<double>> ComputeRewardModelScores(WorkerGroup& reward_model, const Batch& batch,
                                                             const Batch& prompts);

// critic.update_critic on the sequences with values and returns; the ranks' metrics
// averaged (verl's reduce_metrics).
absl::StatusOr<std::map<std::string, double>> UpdateCritic(WorkerGroup& critic, const Batch& batch);

// actor.update_actor on the sequences with old_log_probs and advantages (and
// ref_log_prob with `use_kl_loss`, rollout_is_weights when the batch has them), the first `on_policy_rows` of each rank's shard
// anchored to the update's own forward (OnPolicyRowsPerRank); the ranks' metrics
// averaged.
absl::StatusOr<std::map<std::string, double>> UpdateActor(WorkerGroup& policy, const Batch& batch,
                                                          bool use_kl_loss, int64_t on_policy_rows);

// Critic warmup: the actor first updates at step critic_warmup + 1 (steps count from 1),
// after critic_warmup steps that train only the critic, as verl documents
// trainer.critic_warmup. (verl's code tests critic_warmup <= global_steps, which
// updates the actor one step earlier; both agree at 0.)
bool ActorUpdatesAt(int64_t step, int64_t critic_warmup);

}  // namespace rollout::controller
