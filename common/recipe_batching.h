// How a recipe's passes split their batches into micro-batches: each pass's rows, and
// its token budget where it batches by tokens (actor.use_dynamic_bsz for the actor's
// update, critic.use_dynamic_bsz for the critic's update and values,
// log_prob_use_dynamic_bsz for old_log_prob (rollout.*) and ref, reward_model.use_dynamic_bsz
// for the reward model's scores). The controller
// checks these budgets; the workers form their micro-batches from them.
#pragma once

#include <cstdint>
#include <string>

#include "proto/recipe.pb.h"

namespace rollout::config {

struct PassBatching {
  int64_t rows = 1;        // micro-batch rows without a token budget
  int64_t max_tokens = 0;  // > 0: micro-batches by tokens, at most this many each
  std::string budget_key;  // the recipe key of the budget ("ref.log_prob_max_token_len_per_gpu")
};

PassBatching UpdateActorBatching(const Recipe& recipe);
PassBatching UpdateCriticBatching(const Recipe& recipe);
PassBatching CriticValuesBatching(const Recipe& recipe);
PassBatching OldLogProbBatching(const Recipe& recipe);
PassBatching RefLogProbBatching(const Recipe& recipe);
PassBatching RewardModelBatching(const Recipe& recipe);

}  // namespace rollout::config
