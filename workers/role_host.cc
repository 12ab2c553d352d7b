#include "workers/role_host.h"

#include <ATen/Context.h>

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "workers/diagnostic_methods.h"
#include "workers/prompt_encoding.h"
#include "workers/weight_broadcast.h"

namespace rollout::workers {
namespace {

constexpr absl::Duration kRecipeWait = absl::Seconds(30);

}  // namespace

RoleHost::RoleHost(RoleHostOptions options, MethodRegistry* registry)
    : options_(std::move(options)), registry_(registry) {}

RoleHost::~RoleHost() = default;

absl::Status RoleHost::RegisterInitMethod() {
  RETURN_IF_ERROR(registry_->Register("worker.init_roles", [this](const Batch& in) { return InitRoles(in); }));
  return registry_->Register("worker.prompt_lengths", [this](const Batch& in) { return PromptLengths(in); });
}

absl::StatusOr<Batch> RoleHost::PromptLengths(const Batch& input) {
  if (!recipe_set_.WaitForNotificationWithTimeout(kRecipeWait)) {
    return absl::FailedPreconditionError("worker.prompt_lengths: the recipe has not arrived");
  }
  if (tokenizer_ == nullptr) {
    absl::StatusOr<std::unique_ptr<models::Tokenizer>> tokenizer = LoadActorTokenizer(recipe_);
    if (!tokenizer.ok()) {
      return absl::Status(tokenizer.status().code(),
                          absl::StrCat("worker.prompt_lengths: ", tokenizer.status().message()));
    }
    tokenizer_ = *std::move(tokenizer);
  }
  return WithContext(workers::PromptLengths(*tokenizer_, input), "worker.prompt_lengths");
}

void RoleHost::SetRecipe(config::Recipe recipe) {
  recipe_ = std::move(recipe);
  recipe_set_.Notify();
}

absl::StatusOr<Batch> RoleHost::InitRoles(const Batch& input) {
  if (!recipe_set_.WaitForNotificationWithTimeout(kRecipeWait)) {
    return absl::FailedPreconditionError("worker.init_roles: the recipe has not arrived");
  }
  if (initialised_) return absl::FailedPreconditionError("worker.init_roles: called twice");
  initialised_ = true;
  int64_t total_training_steps = 0;
  const std::string steps = input.Meta("total_training_steps");
  if (!steps.empty() && !absl::SimpleAtoi(steps, &total_training_steps)) {
    return absl::InvalidArgumentError(
        absl::StrCat("worker.init_roles: total_training_steps '", steps, "' is not an integer"));
  }
  // LibTorch seeds its default generators (LoRA dropout draws from them) at random per
  // process; from the recipe instead, runs repeat, and checkpoints continue the stream.
  at::manual_seed(static_cast<uint64_t>(recipe_.trainer().seed()));
  RETURN_IF_ERROR(JoinDataParallelGroup());
  ASSIGN_OR_RETURN(const std::string weight_sync, JoinWeightSyncGroup(input));
  RETURN_IF_ERROR(InitPolicy(total_training_steps));
  RETURN_IF_ERROR(InitCritic(total_training_steps));
  RETURN_IF_ERROR(InitRewardModel());
  Batch reply;
  if (!weight_sync.empty()) reply.SetMeta("weight_sync", weight_sync);
  return reply;
}

absl::Status RoleHost::JoinDataParallelGroup() {
  if (options_.world == 1) return absl::OkStatus();
  if (options_.rendezvous == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("worker.init_roles: pool ", options_.pool, " has ",
                                                      options_.world, " workers but no rendezvous to meet at"));
  }
  CommunicatorOptions communicator;
  communicator.group = options_.pool;
  communicator.rank = options_.rank;
  communicator.world_size = options_.world;
  communicator.device = options_.device;
  communicator.hostname = options_.collective_address;
  ASSIGN_OR_RETURN(data_parallel_, CreateCommunicator(communicator, options_.rendezvous));
  return absl::OkStatus();
}

absl::StatusOr<std::string> RoleHost::JoinWeightSyncGroup(const Batch& init) {
  ASSIGN_OR_RETURN(const std::optional<WeightSyncMembership> membership,
                   WeightSyncMembershipFrom(init, options_.pool, options_.rank));
  if (!membership.has_value()) return std::string();
  if (!HasCollectivesFor(options_.device)) {
    // A CUDA build without Gloo on a CPU pool: every member (the same binary) decides
    // so, before any of them waits for the others.
    ROLLOUT_LOG(INFO) << "weight-sync group " << membership->group << ": this build has no collectives for "
                      << options_.device.str() << "; the weights come through the controller (gRPC relay)";
    return std::string("relay");
  }
  if (options_.rendezvous == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("worker.init_roles: weight-sync group ", membership->group,
                                                      " but no rendezvous to meet at"));
  }
  CommunicatorOptions communicator;
  communicator.group = membership->group;
  communicator.rank = membership->rank;
  communicator.world_size = membership->world_size;
  communicator.device = options_.device;
  communicator.hostname = options_.collective_address;
  ASSIGN_OR_RETURN(weight_sync_, CreateCommunicator(communicator, options_.rendezvous));
  ROLLOUT_LOG(INFO) << "joined weight-sync group " << membership->group << " as rank " << membership->rank
                    << " of " << membership->world_size << " ("
                    << (membership->rank == 0 ? "sends the actor's weights" : "receives the actor's weights") << ")";
  return std::string("broadcast");
}

absl::Status RoleHost::InitPolicy(int64_t total_training_steps) {
  PolicyWorkerSetup setup;
  setup.recipe = recipe_;
  setup.device = options_.device;
  setup.rank = options_.rank;
  setup.world = options_.world;
  setup.data_parallel = data_parallel_.get();
  setup.weight_sync = weight_sync_.get();
  setup.total_training_steps = total_training_steps;
  for (const std::string& role : options_.roles) {
    if (role == "actor" || role == "rollout" || role == "ref") setup.roles.push_back(role);
  }
  if (setup.roles.empty()) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<PolicyWorker>> policy = PolicyWorker::Create(setup);
  if (!policy.ok()) {
    return absl::Status(policy.status().code(), absl::StrCat("initialising ", absl::StrJoin(setup.roles, "+"),
                                                             ": ", policy.status().message()));
  }
  policy_ = *std::move(policy);
  RETURN_IF_ERROR(policy_->RegisterMethods(registry_));
  return RegisterPolicyParameterChecksums(&policy_->model(), registry_);
}

absl::Status RoleHost::InitCritic(int64_t total_training_steps) {
  const std::vector<std::string>& roles = options_.roles;
  if (std::find(roles.begin(), roles.end(), "critic") == roles.end()) return absl::OkStatus();
  CriticWorkerSetup setup;
  setup.recipe = recipe_;
  setup.device = options_.device;
  setup.rank = options_.rank;
  setup.world = options_.world;
  setup.data_parallel = data_parallel_.get();
  setup.total_training_steps = total_training_steps;
  absl::StatusOr<std::unique_ptr<CriticWorker>> critic = CriticWorker::Create(setup);
  if (!critic.ok()) {
    return absl::Status(critic.status().code(), absl::StrCat("initialising critic: ", critic.status().message()));
  }
  critic_ = *std::move(critic);
  return critic_->RegisterMethods(registry_);
}

absl::Status RoleHost::InitRewardModel() {
  const std::vector<std::string>& roles = options_.roles;
  if (std::find(roles.begin(), roles.end(), "reward_model") == roles.end()) return absl::OkStatus();
  RewardModelWorkerSetup setup;
  setup.recipe = recipe_;
  setup.device = options_.device;
  absl::StatusOr<std::unique_ptr<RewardModelWorker>> reward_model = RewardModelWorker::Create(setup);
  if (!reward_model.ok()) {
    return absl::Status(reward_model.status().code(),
                        absl::StrCat("initialising reward_model: ", reward_model.status().message()));
  }
  reward_model_ = *std::move(reward_model);
  return reward_model_->RegisterMethods(registry_);
}

}  // namespace rollout::workers
