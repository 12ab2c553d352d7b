// The worker calls of one PPO / GRPO step (verl's RayPPOTrainer.fit between gen and
// the metrics): each sends the columns its method takes, data-parallel over the
// group, and folds the reply into the step's batch or metrics. `batch` is the step's
// Batch in verl's column names; a missing column is NotFound naming it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/batch.h"
#include "controller/worker_group.h"

namespace rollout::controller {

// The sequence columns every scoring and training method takes: input_ids,
// attention_mask, position_ids, responses, response_mask.
const std::vector<std::string>& SequenceColumns();

// actor.compute_log_prob: adds old_log_probs [N, R]; returns actor/entropy, the mean
// entropy over the response tokens.
absl::StatusOr<double> ComputeOldLogProbs(WorkerGroup& policy, Batch* batch);

// ref.compute_ref_log_prob: adds ref_log_prob [N, R].
absl::Status ComputeRefLogProbs(WorkerGroup& policy, Batch* batch);

// critic.compute_values: adds values [N, R].
absl::Status ComputeValues(WorkerGroup& critic, Batch* batch);

// critic.update_critic on the sequences with values and returns; the ranks' metrics
// averaged (verl's reduce_metrics).
absl::StatusOr<std::map<std::string, double>> UpdateCritic(WorkerGroup& critic, const Batch& batch);

// actor.update_actor on the sequences with old_log_probs and advantages (and
// ref_log_prob with `use_kl_loss`); the ranks' metrics averaged.
absl::StatusOr<std::map<std::string, double>> UpdateActor(WorkerGroup& policy, const Batch& batch,
                                                          bool use_kl_loss);

// Critic warmup: the actor first updates at step critic_warmup + 1 (steps count from 1),
// after critic_warmup steps that train only the critic, as verl documents
// trainer.critic_warmup. (verl's code tests critic_warmup <= global_steps, which
// updates the actor one step earlier; both agree at 0.)
bool ActorUpdatesAt(int64_t step, int64_t critic_warmup);

}  // namespace rollout::controller
