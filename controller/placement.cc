#include "controller/placement.h"

#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace rollout::controller {
namespace {

constexpr char kGlobalPool[] = "global_pool";

std::map<std::string, config::ResourcePool> PoolsOf(const config::Recipe& recipe) {
  std::map<std::string, config::ResourcePool> pools(recipe.resource_pools().begin(),
                                                    recipe.resource_pools().end());
  if (pools.empty()) {
    config::ResourcePool pool;
    pool.set_nodes(recipe.trainer().nnodes());
    pool.set_devices_per_node(recipe.trainer().n_gpus_per_node());
    pool.set_device(recipe.trainer().device());
    pools[kGlobalPool] = pool;
  }
  return pools;
}

// The roles the recipe needs, with the pool each names (possibly empty).
std::vector<std::pair<std::string, std::string>> NeededRoles(const config::Recipe& recipe) {
  const config::Placement& p = recipe.placement();
  std::vector<std::pair<std::string, std::string>> roles = {{"actor", p.actor()}};
  // SFT and DPO train the actor alone (DPO's reference is the actor's frozen copy): the
  // other roles only where placed. Validation alone (trainer.val_only) needs the
  // actor's weights and, in a PPO run, the rollout: no reference, critic or reward model.
  const bool ppo = recipe.trainer().mode() != "sft" && recipe.trainer().mode() != "dpo";
  if (ppo || !p.rollout().empty()) roles.emplace_back("rollout", p.rollout());
  if (recipe.trainer().val_only()) return roles;
  if (ppo || !p.ref().empty()) roles.emplace_back("ref", p.ref());
  if ((ppo && recipe.algorithm().adv_estimator() == "gae") || !p.critic().empty()) {
    roles.emplace_back("critic", p.critic());
  }
  if ((ppo && recipe.reward_model().enable()) || !p.reward_model().empty()) {
    roles.emplace_back("reward_model", p.reward_model());
  }
  return roles;
}

std::string PoolNames(const std::map<std::string, config::ResourcePool>& pools) {
  std::vector<std::string> names;
  for (const auto& entry : pools) names.push_back(entry.first);
  return absl::StrJoin(names, ", ");
}

absl::Status AssignRoles(const config::LoadedRecipe& loaded,
                         const std::map<std::string, config::ResourcePool>& pools,
                         std::map<std::string, std::string>* role_to_pool) {
  for (const auto& [role, named] : NeededRoles(loaded.recipe)) {
    const std::string key = "placement." + role;
    std::string pool = named;
    if (pool.empty()) {
      if (pools.size() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            key, " is not set and the recipe has ", pools.size(), " resource pools (",
            PoolNames(pools), "): name the pool for ", role));
      }
      pool = pools.begin()->first;
    } else if (pools.count(pool) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", key, "' at ", config::SourceOf(loaded, key), " names pool '", pool,
          "', which is not in resource_pools (", PoolNames(pools), ")"));
    }
    (*role_to_pool)[role] = pool;
  }
  return absl::OkStatus();
}

// Where a pool was written: the first key under resource_pools.<name>, or the trainer
// keys verl's global pool is made from.
std::string PoolSource(const config::LoadedRecipe& loaded, const std::string& name) {
  const std::string prefix = "resource_pools." + name;
  auto it = loaded.sources.lower_bound(prefix);
  if (it != loaded.sources.end() && it->first.compare(0, prefix.size(), prefix) == 0) {
    return it->second;
  }
  return config::SourceOf(loaded, "trainer.nnodes");
}

}  // namespace

absl::StatusOr<Placement> ResolvePlacement(const config::LoadedRecipe& loaded) {
  const config::Recipe& recipe = loaded.recipe;
  const std::map<std::string, config::ResourcePool> pools = PoolsOf(recipe);
  Placement placement;
  if (absl::Status s = AssignRoles(loaded, pools, &placement.role_to_pool); !s.ok()) return s;

  std::map<int, int> next_gpu_on_node;  // GPUs already handed out, per node
  for (const auto& [name, pool] : pools) {
    PoolPlan plan;
    plan.name = name;
    plan.device = pool.device();
    plan.nodes = pool.nodes();
    plan.devices_per_node = pool.devices_per_node();
    for (const auto& [role, pool_name] : placement.role_to_pool) {
      if (pool_name == name) plan.roles.push_back(role);
    }
    const std::string where = PoolSource(loaded, name);
    if (plan.roles.empty() && recipe.trainer().val_only()) {
      placement.idle_pools.push_back(name);
      continue;
    }
    if (plan.roles.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "resource pool '", name, "' at ", where, " has no roles placed on it; remove it or "
          "name it in placement"));
    }
    if (plan.nodes > 1 && recipe.runtime().launcher() == "local") {
      return absl::InvalidArgumentError(absl::StrCat(
          "resource pool '", name, "' at ", where, " spans ", plan.nodes,
          " nodes but runtime.launcher is 'local' (this machine only; runtime.launcher: slurm runs workers on the "
          "nodes of a Slurm allocation)"));
    }
    const int world = plan.nodes * plan.devices_per_node;
    for (int rank = 0; rank < world; ++rank) {
      WorkerSlot slot;
      slot.worker_id = static_cast<int>(placement.workers.size());
      slot.pool = name;
      slot.roles = plan.roles;
      slot.rank = rank;
      slot.world = world;
      slot.node = rank / plan.devices_per_node;
      slot.device = plan.device == "cpu"
                        ? "cpu"
                        : absl::StrCat("cuda:", next_gpu_on_node[slot.node]++);
      plan.worker_ids.push_back(slot.worker_id);
      placement.workers.push_back(slot);
    }
    placement.pools.push_back(plan);
  }
  return placement;
}

std::string Placement::Describe() const {
  std::ostringstream out;
  out << "placement: " << workers.size() << " worker process(es)\n";
  for (const PoolPlan& pool : pools) {
    out << absl::StrFormat("  pool %s: %d node(s) x %d %s, roles %s\n", pool.name, pool.nodes,
                           pool.devices_per_node, pool.device, absl::StrJoin(pool.roles, "+"));
    for (int id : pool.worker_ids) {
      const WorkerSlot& w = workers[id];
      out << absl::StrFormat("    worker %d  rank %d/%d  node %d  %s\n", w.worker_id, w.rank,
                             w.world, w.node, w.device);
    }
  }
  for (const std::string& name : idle_pools) {
    out << absl::StrFormat("  pool %s: not started (trainer.val_only: validation uses none of its roles)\n", name);
  }
  return out.str();
}

}  // namespace rollout::controller
