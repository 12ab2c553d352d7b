#include "controller/runtime.h"

#include <unistd.h>

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "common/run_token.h"
#include "common/status_macros.h"

namespace rollout::controller {

ControllerRuntime::ControllerRuntime(const Placement& placement, const RuntimeOptions& options,
                                     Launcher* launcher, RunHealth* health)
    : placement_(placement),
      options_(options),
      run_token_(NewRunToken()),
      launcher_(launcher),
      health_(health),
      registry_(placement.workers),
      service_(run_token_, options.recipe_yaml, &registry_),
      monitor_(launcher, &registry_, health,
               absl::Seconds(options.config.heartbeat_timeout_s())) {}

absl::StatusOr<std::unique_ptr<ControllerRuntime>> ControllerRuntime::Start(
    const Placement& placement, const RuntimeOptions& options, Launcher* launcher,
    RunHealth* health) {
  std::unique_ptr<ControllerRuntime> runtime(
      new ControllerRuntime(placement, options, launcher, health));
  RETURN_IF_ERROR(runtime->StartServer());
  RETURN_IF_ERROR(runtime->LaunchWorkers());
  runtime->monitor_.Start();
  const absl::Time deadline = absl::Now() + absl::Seconds(options.config.register_timeout_s());
  RETURN_IF_ERROR(runtime->registry_.WaitForAll(deadline, [health] { return health->status(); }));
  runtime->ConnectGroups();
  ROLLOUT_LOG(INFO) << "all " << placement.workers.size() << " worker(s) registered";
  return runtime;
}

ControllerRuntime::~ControllerRuntime() { Shutdown(); }

absl::Status ControllerRuntime::StartServer() {
  const std::string& bind = options_.config.bind_address();
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat(bind, ":0"), grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service_);
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port == 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot start the controller server on ", bind, " (runtime.bind_address)"));
  }
  std::string host = bind;
  if (bind == "0.0.0.0") {
    char hostname[256] = {0};
    gethostname(hostname, sizeof(hostname) - 1);
    host = hostname;
  }
  address_ = absl::StrCat(host, ":", port);
  return absl::OkStatus();
}

absl::Status ControllerRuntime::LaunchWorkers() {
  const config::RuntimeConfig& c = options_.config;
  for (const WorkerSlot& slot : placement_.workers) {
    LaunchSpec spec;
    spec.worker_id = slot.worker_id;
    spec.description = DescribeWorker(registry_.Get(slot.worker_id));
    spec.argv = {options_.worker_binary,
                 "worker",
                 "--controller=" + address_,
                 absl::StrCat("--worker_id=", slot.worker_id),
                 "--pool=" + slot.pool,
                 "--roles=" + absl::StrJoin(slot.roles, ","),
                 absl::StrCat("--rank=", slot.rank),
                 absl::StrCat("--world=", slot.world),
                 "--device=" + slot.device,
                 "--bind=" + c.bind_address(),
                 absl::StrCat("--heartbeat_interval_s=", c.heartbeat_interval_s()),
                 absl::StrCat("--heartbeat_timeout_s=", c.heartbeat_timeout_s()),
                 absl::StrCat("--register_timeout_s=", c.register_timeout_s()),
                 "--log_level=" + options_.worker_log_level};
    if (launcher_->WorkersAreChildren()) spec.argv.push_back(absl::StrCat("--parent_pid=", getpid()));
    spec.env = {absl::StrCat(kRunTokenEnv, "=", run_token_)};
    spec.node = slot.node;
    RETURN_IF_ERROR(launcher_->Launch(spec));
  }
  return absl::OkStatus();
}

void ControllerRuntime::ConnectGroups() {
  std::vector<WorkerInfo> workers = registry_.Snapshot();
  for (const WorkerInfo& info : workers) {
    clients_.push_back(std::make_unique<WorkerClient>(info, run_token_, health_));
  }
  for (const PoolPlan& pool : placement_.pools) {
    std::vector<WorkerClient*> members;
    for (int id : pool.worker_ids) members.push_back(clients_[id].get());  // ids ordered by rank
    groups_[pool.name] = std::make_unique<WorkerGroup>(pool.name, members, health_);
  }
}

absl::StatusOr<WorkerGroup*> ControllerRuntime::Group(const std::string& pool) {
  auto it = groups_.find(pool);
  if (it == groups_.end()) {
    return absl::NotFoundError(absl::StrCat("no worker group for pool '", pool, "'"));
  }
  return it->second.get();
}

absl::StatusOr<WorkerGroup*> ControllerRuntime::GroupForRole(const std::string& role) {
  auto it = placement_.role_to_pool.find(role);
  if (it == placement_.role_to_pool.end()) {
    return absl::NotFoundError(absl::StrCat("this recipe places no '", role, "' role"));
  }
  return Group(it->second);
}

void ControllerRuntime::Shutdown(absl::Duration grace) {
  if (shut_down_) return;
  shut_down_ = true;
  monitor_.Stop();  // exits from here on are expected
  // Every registered worker, also those registered before a failed Start() made
  // their clients.
  for (const WorkerInfo& info : registry_.Snapshot()) {
    if (!info.registered) continue;
    absl::Status stopped = WorkerClient(info, run_token_, health_)
                               .Shutdown("controller shutting down", absl::Seconds(1));
    if (!stopped.ok()) ROLLOUT_LOG(DEBUG) << stopped.message();
  }
  launcher_->StopAll(grace);
  if (server_ != nullptr) server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
}

}  // namespace rollout::controller
