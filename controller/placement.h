// Placement: which worker processes a recipe needs, and which roles each hosts.
//
// Pools come from `resource_pools`; when there are none, one `global_pool` is made
// from trainer.nnodes x trainer.n_gpus_per_node on trainer.device (verl's default).
// Each role (actor, rollout, ref; in PPO runs (trainer.mode ppo) critic when
// algorithm.adv_estimator is gae and reward_model with reward_model.enable; either
// wherever placement names its pool) runs on
// the pool `placement.<role>` names, or on the only pool when there is one. Roles on
// the same pool are colocated: one process per device hosts all of them. A
// trainer.val_only run validates the loaded weights and nothing else: it places the
// actor and (PPO) the rollout alone, and starts no pool left without roles.
// GPU indices are handed out per node across pools, so two CUDA pools on one node
// never share a GPU.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/recipe_loader.h"

namespace rollout::controller {

struct WorkerSlot {
  int worker_id = 0;  // index into Placement::workers
  std::string pool;
  std::vector<std::string> roles;
  int rank = 0;   // within the pool
  int world = 1;  // processes in the pool
  int node = 0;
  std::string device;  // "cpu" or "cuda:N"
};

struct PoolPlan {
  std::string name;
  std::string device;  // "cpu" or "cuda"
  int nodes = 1;
  int devices_per_node = 1;
  std::vector<std::string> roles;
  std::vector<int> worker_ids;
};

struct Placement {
  std::vector<PoolPlan> pools;
  std::vector<WorkerSlot> workers;
  std::map<std::string, std::string> role_to_pool;
  // trainer.val_only: the pools whose roles validation does not use, not started.
  std::vector<std::string> idle_pools;

  // A few lines for the console: pools, their roles, and each worker's device.
  std::string Describe() const;
};

// InvalidArgument naming the key and its source for: a role placed on an unknown
// pool, an unplaced role when several pools exist, a pool with no roles (but in a
// trainer.val_only run), more than one node with the local launcher.
absl::StatusOr<Placement> ResolvePlacement(const config::LoadedRecipe& loaded);

}  // namespace rollout::controller
