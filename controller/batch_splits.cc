#include "controller/batch_splits.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::controller {

absl::Status CheckBatchSplits(const config::Recipe& recipe, int world, const std::string& what,
                              const std::string& key, int64_t mini_batch_size) {
  const int64_t batch_size = recipe.data().train_batch_size();
  if (batch_size % world != 0) {
    return absl::InvalidArgumentError(absl::StrCat("data.train_batch_size (", batch_size,
                                                   ") must split evenly over the ", world, " ", what,
                                                   " workers"));
  }
  if (batch_size % mini_batch_size != 0) {
    return absl::InvalidArgumentError(absl::StrCat("data.train_batch_size (", batch_size, ") must be a multiple of ",
                                                   key, " (", mini_batch_size,
                                                   "): every update takes whole mini-batches"));
  }
  const int64_t rows = mini_batch_size * recipe.rollout().n();
  if (rows % world != 0) {
    return absl::InvalidArgumentError(absl::StrCat(key, " x rollout.n = ", rows,
                                                   " rows do not split over the ", world, " ", what,
                                                   " workers"));
  }
  return absl::OkStatus();
}

namespace {

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

absl::Status CheckPlacementBatchSplits(const config::Recipe& recipe, const Placement& placement) {
  const std::string& mode = recipe.trainer().mode();
  if (mode == "sft" || mode == "dpo") return absl::OkStatus();
  if (const int world = RoleWorld(placement, "actor"); world > 0) {
    RETURN_IF_ERROR(CheckBatchSplits(recipe, world, "policy", "actor.ppo_mini_batch_size",
                                     recipe.actor().ppo_mini_batch_size()));
  }
  if (const int world = RoleWorld(placement, "critic"); world > 0) {
    RETURN_IF_ERROR(CheckBatchSplits(recipe, world, "critic", "critic.ppo_mini_batch_size",
                                     recipe.critic().ppo_mini_batch_size()));
  }
  return absl::OkStatus();
}

}  // namespace rollout::controller
