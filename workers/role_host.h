// The training roles of one worker process, created when the controller asks
// (`worker.init_roles`, verl's init_model) rather than at start-up: the recipe arrives
// with the registration reply, and loading models can take long, so the controller
// starts every worker first and then initialises them together.
//
//   worker.init_roles   meta total_training_steps (the LR schedules' horizon) -> empty;
//                       registers the hosted roles' methods (policy_worker.h)
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

  const std::vector<std::string> roles_;
  const c10::Device device_;
  const int rank_;
  const int world_;
  MethodRegistry* const registry_;
  config::Recipe recipe_;
  absl::Notification recipe_set_;
  std::unique_ptr<PolicyWorker> policy_;
};

}  // namespace rollout::workers
