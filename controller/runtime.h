// ControllerRuntime: the controller's side of the process runtime (DESIGN.md §1).
// Start() serves the Controller service, launches one worker process per placement
// slot, waits for all of them to register (reporting a worker that failed to start
// with its exit status and last output lines), and hands out a WorkerGroup per pool.
// From then on a WorkerMonitor turns any worker death into a run failure that
// cancels calls in flight. Shutdown() stops every worker; the destructor calls it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/server.h>

#include "absl/status/statusor.h"
#include "controller/controller_service.h"
#include "controller/launcher.h"
#include "controller/placement.h"
#include "controller/run_health.h"
#include "controller/worker_client.h"
#include "controller/worker_group.h"
#include "controller/worker_monitor.h"
#include "controller/worker_registry.h"
#include "proto/recipe.pb.h"

namespace rollout::controller {

struct RuntimeOptions {
  // The `rollout` executable the workers run (`rollout worker ...`).
  std::string worker_binary;
  // Handed to each worker at registration.
  std::string recipe_yaml;
  config::RuntimeConfig config;
  std::string worker_log_level = "info";
};

class ControllerRuntime {
 public:
  // `launcher` must outlive the runtime. `health` is the run's: a failure recorded
  // there by anyone (Ctrl-C, a dead worker) fails calls and Start() itself.
  static absl::StatusOr<std::unique_ptr<ControllerRuntime>> Start(const Placement& placement,
                                                                   const RuntimeOptions& options,
                                                                   Launcher* launcher,
                                                                   RunHealth* health);
  ~ControllerRuntime();

  // NotFound for a pool the placement does not have.
  absl::StatusOr<WorkerGroup*> Group(const std::string& pool);
  // The group hosting `role`; NotFound when the recipe does not use that role.
  absl::StatusOr<WorkerGroup*> GroupForRole(const std::string& role);
  std::vector<WorkerInfo> Workers() const { return registry_.Snapshot(); }
  const std::string& address() const { return address_; }

  // Asks every worker to stop, waits up to `grace` for the processes to end, then
  // kills what is left. Idempotent.
  void Shutdown(absl::Duration grace = absl::Seconds(3));

 private:
  ControllerRuntime(const Placement& placement, const RuntimeOptions& options,
                    Launcher* launcher, RunHealth* health);
  absl::Status StartServer();
  absl::Status LaunchWorkers();
  void ConnectGroups();

  const Placement placement_;
  const RuntimeOptions options_;
  const std::string run_token_;
  Launcher* const launcher_;
  RunHealth* const health_;
  WorkerRegistry registry_;
  ControllerService service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  WorkerMonitor monitor_;
  std::vector<std::unique_ptr<WorkerClient>> clients_;
  std::map<std::string, std::unique_ptr<WorkerGroup>> groups_;
  bool shut_down_ = false;
};

}  // namespace rollout::controller
