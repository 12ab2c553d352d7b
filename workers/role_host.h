// The training roles of one worker process, created when the controller asks
// (`worker.init_roles`, verl's init_model) rather than at start-up: the recipe arrives
// with the registration reply, and loading models can take long, so the controller
// starts every worker first and then initialises them together.
//
//   worker.init_roles   meta total_training_steps (the LR schedules' horizon) and
//                       optionally a weight-sync group (weight_broadcast.h) -> meta
//                       weight_sync: "broadcast" when this worker joined that group,
//                       "relay" when it is a member but this build has no
//                       collectives for its device (the weights then go through the
//                       controller), absent when it is no member;
//                       creates the hosted roles (actor, rollout and ref:
//                       policy_worker.h; critic: critic_worker.h; reward_model:
//                       reward_model_worker.h) and registers
//                       their methods (with the policy, also
//                       diag.policy_parameter_checksums: diagnostic_methods.h),
//                       after seeding LibTorch's default generators with trainer.seed;
//                       in a pool of several workers it first joins the pool's
//                       data-parallel group (communicator.h), which every worker of
//                       the pool does in the same call; then the weight-sync group,
//                       which every member (of two pools) joins in the same call
//   worker.prompt_lengths  prompt, prompt_format -> prompt_length [N] int64, the
//                       prompts' token counts under the actor's tokenizer and chat
//                       template, untruncated (prompt_encoding.h PromptLengths); needs no
//                       roles, so the controller can drop overlong prompts
//                       (data.filter_overlong_prompts) before it sizes the run
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
#include "workers/communicator.h"
#include "workers/critic_worker.h"
#include "workers/method_registry.h"
#include "workers/policy_worker.h"
#include "workers/reward_model_worker.h"
#include "workers/rendezvous_client.h"

namespace rollout::workers {

struct RoleHostOptions {
  std::vector<std::string> roles;
  c10::Device device = c10::Device(c10::kCPU);
  std::string pool;  // names the data-parallel group
  int rank = 0;
  int world = 1;
  // With world > 1 or in a weight-sync group: where the group's workers meet (not
  // owned, outlives the host), and the address this worker accepts its peers' Gloo
  // connections on.
  RendezvousClient* rendezvous = nullptr;
  std::string collective_address = "127.0.0.1";
};

class RoleHost {
 public:
  // `registry` must outlive the host.
  RoleHost(RoleHostOptions options, MethodRegistry* registry);
  ~RoleHost();

  // Registers worker.init_roles and worker.prompt_lengths.
  absl::Status RegisterInitMethod();
  // The run's recipe, from the registration reply. Call once.
  void SetRecipe(config::Recipe recipe);

 private:
  absl::StatusOr<Batch> InitRoles(const Batch& input);
  absl::StatusOr<Batch> PromptLengths(const Batch& input);
  // Each creates its worker when this process hosts one of its roles.
  absl::Status InitPolicy(int64_t total_training_steps);
  absl::Status InitCritic(int64_t total_training_steps);
  absl::Status InitRewardModel();

  // Joins the pool's data-parallel group when it has several workers.
  absl::Status JoinDataParallelGroup();
  // Joins the weight-sync group `init` asks this worker into; returns the reply's
  // weight_sync meta (see above).
  absl::StatusOr<std::string> JoinWeightSyncGroup(const Batch& init);

  const RoleHostOptions options_;
  MethodRegistry* const registry_;
  config::Recipe recipe_;
  absl::Notification recipe_set_;
  bool initialised_ = false;
  std::unique_ptr<Communicator> data_parallel_;  // null on a pool of one
  std::unique_ptr<Communicator> weight_sync_;    // null unless this worker joined one
  std::unique_ptr<models::Tokenizer> tokenizer_;  // worker.prompt_lengths', loaded on its first call
  std::unique_ptr<PolicyWorker> policy_;
  std::unique_ptr<CriticWorker> critic_;
  std::unique_ptr<RewardModelWorker> reward_model_;
};

}  // namespace rollout::workers
