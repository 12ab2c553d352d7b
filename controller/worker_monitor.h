// Watches the workers of a run on its own thread and turns a death into a run
// failure within a fraction of a second: a worker process that ended (from the
// launcher, with its exit status and last output lines) or a registered worker that
// sent no heartbeat for `heartbeat_timeout` (a hung or unreachable host).
// Stop() before shutting workers down on purpose.
#pragma once

#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "controller/launcher.h"
#include "controller/run_health.h"
#include "controller/worker_registry.h"

namespace rollout::controller {

class WorkerMonitor {
 public:
  // All pointers must outlive the monitor.
  WorkerMonitor(Launcher* launcher, const WorkerRegistry* registry, RunHealth* health,
                absl::Duration heartbeat_timeout);
  ~WorkerMonitor();  // Stop()

  void Start();
  void Stop();

 private:
  void Run();
  void CheckOnce();

  Launcher* const launcher_;
  const WorkerRegistry* const registry_;
  RunHealth* const health_;
  const absl::Duration heartbeat_timeout_;
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace rollout::controller
