// The training roles of one worker process, created when the controller asks
// (`worker.init_roles`, verl's init_model) rather than at start-up: the recipe arrives
// with the registration reply, and loading models can take long, so the controller
// starts every worker first and then initialises them together.
//
//   worker.init_roles   meta total_training_steps (the LR schedules' horizon) -> empty;
//                       creates the hosted roles (actor, rollout and ref:
//                       policy_worker.h; critic: critic_worker.h) and registers
//                       their methods (with the policy, also
//                       diag.policy_parameter_checksums: diagnostic_methods.h),
//                       after seeding LibTorch's default generators with trainer.seed
//
// Thread-safe: SetRecipe may race with the first worker.init_roles call, which waits
// for it.
#pragma once

#include <c10/core/Device.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "common/batch.h"
#include "proto/recipe.pb.h"
#include "workers/critic_worker.h"
#include "workers/method_registry.h"
#include "workers/policy_worker.h"

namespace rollout::workers {

class RoleHost {
 public:
  // `registry` must outlive the host.
  RoleHost(std::vector<std::string> roles, c10::Device device, int rank, int world,
           MethodRegistry* registry);
  ~RoleHost();

  // Registers worker.init_roles.
  absl::Status RegisterInitMethod();
  // The run's recipe, from the registration reply. Call once.
  void SetRecipe(config::Recipe recipe);

 private:
  absl::StatusOr<Batch> InitRoles(const Batch& input);
  // Each creates its worker when this process hosts one of its roles.
  absl::Status InitPolicy(int64_t total_training_steps);
  absl::Status InitCritic(int64_t total_training_steps);

  const std::vector<std::string> roles_;
  const c10::Device device_;
  const int rank_;
  const int world_;
  MethodRegistry* const registry_;
  config::Recipe recipe_;
  absl::Notification recipe_set_;
  bool initialised_ = false;
  std::unique_ptr<PolicyWorker> policy_;
  std::unique_ptr<CriticWorker> critic_;
};

}  // namespace rollout::workers
