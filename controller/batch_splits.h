// How a PPO/GRPO step's batch splits, checked against the recipe: data.train_batch_size
// prompts over a role's workers and into whole mini-batches, and each mini-batch's rows
// (prompts x rollout.n) over the workers. `rollout plan` and `rollout train` check the
// placement before any worker starts; the trainer checks the started groups again.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "common/recipe_loader.h"
#include "controller/placement.h"

namespace rollout::controller {

// InvalidArgument naming `key` (e.g. "actor.ppo_mini_batch_size", whose value is
// `mini_batch_size`) when the batch does not split over `world` workers of the `what`
// role group ("policy", "critic") or into whole mini-batches.
absl::Status CheckBatchSplits(const config::Recipe& recipe, int world, const std::string& what,
                              const std::string& key, int64_t mini_batch_size);

// CheckBatchSplits for the actor's pool and, when placed, the critic's. OK for SFT and
// DPO recipes (trainer.mode sft / dpo), whose loops split their own batches.
absl::Status CheckPlacementBatchSplits(const config::Recipe& recipe, const Placement& placement);

}  // namespace rollout::controller
