// How a PPO/GRPO step's batch splits, checked against the recipe: data.train_batch_size
// prompts over a role's workers and into mini-batches (at least one; the last may be
// smaller, as verl's split leaves it), each mini-batch's rows
// (prompts x rollout.n) over the workers, and micro-batches formed by tokens wide enough
// for the longest row. `rollout plan` and `rollout train` check the placement before any
// worker starts; the trainer checks the started groups again with the same functions.
#pragma once

#include "absl/status/status.h"
#include "common/recipe_loader.h"
#include "controller/placement.h"

namespace rollout::controller {

// InvalidArgument naming the recipe key at fault when the actor's batching does not fit
// `world` policy workers (actor.ppo_mini_batch_size; the token budgets of the update,
// old_log_prob and ref passes).
absl::Status CheckPolicyBatching(const config::Recipe& recipe, int world);

// The same for `world` critic workers (critic.ppo_mini_batch_size; the token budgets of
// the critic's update and values passes).
absl::Status CheckCriticBatching(const config::Recipe& recipe, int world);

// The reward model's token budget (reward_model.forward_max_token_len_per_gpu with
// use_dynamic_bsz) against the longest row it scores: the actor's, and when it
// re-renders them (reward_model.model.input_tokenizer not null) reward_model.max_length.
absl::Status CheckRewardModelBatching(const config::Recipe& recipe);

// CheckPolicyBatching for the actor's pool and, when placed, CheckCriticBatching for the
// critic's and CheckRewardModelBatching for the reward model's. SFT and DPO recipes
// (trainer.mode sft / dpo) split their own batches: only the SFT update's token budget
// is checked. data.max_length, which bounds their rows, is refused in other recipes
// and below 2.
absl::Status CheckPlacementBatching(const config::Recipe& recipe, const Placement& placement);

}  // namespace rollout::controller
