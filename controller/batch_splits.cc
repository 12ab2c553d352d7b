#include "controller/batch_splits.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/recipe_batching.h"
#include "common/status_macros.h"

namespace rollout::controller {
namespace {

// data.train_batch_size over `world` workers of the `what` group ("policy", "critic")
// and into mini-batches of `key` (`mini_batch_size` prompts; the last takes what is
// left, as verl's split does), whose rows split over the workers too.
absl::Status CheckSplits(const config::Recipe& recipe, int world, const std::string& what,
                         const std::string& key, int64_t mini_batch_size) {
  const int64_t batch_size = recipe.data().train_batch_size();
  if (batch_size % world != 0) {
    return absl::InvalidArgumentError(absl::StrCat("data.train_batch_size (", batch_size,
                                                   ") must split evenly over the ", world, " ", what,
                                                   " workers"));
  }
  if (batch_size < mini_batch_size) {
    return absl::InvalidArgumentError(absl::StrCat("data.train_batch_size (", batch_size, ") must be at least ", key,
                                                   " (", mini_batch_size, "), as verl asserts"));
  }
  const int64_t rows = mini_batch_size * recipe.rollout().n();
  if (rows % world != 0) {
    return absl::InvalidArgumentError(absl::StrCat(key, " x rollout.n = ", rows,
                                                   " rows do not split over the ", world, " ", what,
                                                   " workers"));
  }
  return absl::OkStatus();
}

// A pass that forms its micro-batches by tokens must fit the longest row in one, as
// verl asserts: data.max_length where it bounds SFT rows, else the two parts' lengths.
absl::Status CheckTokenBudget(const config::Recipe& recipe, const config::PassBatching& pass) {
  const config::DataConfig& data = recipe.data();
  const bool whole_rows = data.max_length() > 0;
  const int64_t longest =
      whole_rows ? int64_t{data.max_length()} : int64_t{data.max_prompt_length()} + data.max_response_length();
  if (pass.max_tokens == 0 || pass.max_tokens >= longest) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      pass.budget_key, " (", pass.max_tokens, ") must be at least ",
      whole_rows ? "data.max_length" : "data.max_prompt_length + data.max_response_length", " (", longest,
      "): a micro-batch by tokens holds whole rows"));
}

// data.max_length bounds the rows of SFT and DPO recipes only, and leaves each row a
// token to train after its first.
absl::Status CheckWholeRowLength(const config::Recipe& recipe) {
  const int32_t max_length = recipe.data().max_length();
  if (max_length == 0) return absl::OkStatus();
  const std::string& mode = recipe.trainer().mode();
  if (mode != "sft" && mode != "dpo") {
    return absl::InvalidArgumentError(absl::StrCat(
        "data.max_length (", max_length, ") bounds SFT and DPO rows (trainer.mode sft or dpo); a ", mode,
        " recipe bounds its prompts and responses, and its sft_warm_start's, by data.max_prompt_length and "
        "data.max_response_length: remove it"));
  }
  if (max_length < 2) {
    return absl::InvalidArgumentError(
        "data.max_length (1) leaves a row no token to train on: a row's first token is context only");
  }
  return absl::OkStatus();
}

// Workers of the pool `role` is placed on; 0 when the role is not placed.
int RoleWorld(const Placement& placement, const std::string& role) {
  const auto pool = placement.role_to_pool.find(role);
  if (pool == placement.role_to_pool.end()) return 0;
  for (const PoolPlan& plan : placement.pools) {
    if (plan.name == pool->second) return static_cast<int>(plan.worker_ids.size());
  }
  return 0;
}

}  // namespace

absl::Status CheckPolicyBatching(const config::Recipe& recipe, int world) {
  RETURN_IF_ERROR(CheckSplits(recipe, world, "policy", "actor.ppo_mini_batch_size",
                              recipe.actor().ppo_mini_batch_size()));
  for (const config::PassBatching& pass : {config::UpdateActorBatching(recipe),
                                            config::OldLogProbBatching(recipe),
                                            config::RefLogProbBatching(recipe)}) {
    RETURN_IF_ERROR(CheckTokenBudget(recipe, pass));
  }
  return absl::OkStatus();
}

absl::Status CheckCriticBatching(const config::Recipe& recipe, int world) {
  RETURN_IF_ERROR(CheckTokenBudget(recipe, config::UpdateCriticBatching(recipe)));
  RETURN_IF_ERROR(CheckTokenBudget(recipe, config::CriticValuesBatching(recipe)));
  return CheckSplits(recipe, world, "critic", "critic.ppo_mini_batch_size",
                     recipe.critic().ppo_mini_batch_size());
}

absl::Status CheckRewardModelBatching(const config::Recipe& recipe) {
  const config::PassBatching pass = config::RewardModelBatching(recipe);
  RETURN_IF_ERROR(CheckTokenBudget(recipe, pass));
  const config::RewardModelConfig& reward_model = recipe.reward_model();
  // input_tokenizer null: the actor's rows as they are, which the check above covers.
  if (pass.max_tokens == 0 || reward_model.model().input_tokenizer() == "null" ||
      reward_model.max_length() <= pass.max_tokens) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      pass.budget_key, " (", pass.max_tokens, ") must be at least reward_model.max_length (",
      reward_model.max_length(), "): a micro-batch by tokens holds whole rows"));
}

absl::Status CheckPlacementBatching(const config::Recipe& recipe, const Placement& placement) {
  RETURN_IF_ERROR(CheckWholeRowLength(recipe));
  const std::string& mode = recipe.trainer().mode();
  // SFT and DPO split their own batches; SFT's micro-batches follow the update's budget.
  if (mode == "sft") return CheckTokenBudget(recipe, config::UpdateActorBatching(recipe));
  if (mode == "dpo") return absl::OkStatus();
  if (const int world = RoleWorld(placement, "actor"); world > 0) {
    RETURN_IF_ERROR(CheckPolicyBatching(recipe, world));
  }
  if (const int world = RoleWorld(placement, "critic"); world > 0) {
    RETURN_IF_ERROR(CheckCriticBatching(recipe, world));
  }
  if (RoleWorld(placement, "reward_model") > 0) RETURN_IF_ERROR(CheckRewardModelBatching(recipe));
  return absl::OkStatus();
}

}  // namespace rollout::controller
