// Launcher for this machine: fork/exec of each worker.
//
// Every child gets a parent-death signal (SIGKILL), so workers never outlive the
// controller even when it is killed with -9; its own process group, so a Ctrl-C in
// the terminal reaches only the controller, which then stops the workers in order;
// and a pipe for stdout+stderr, pumped into our stderr and kept for failure reports.
//
// The parent-death signal fires when the *thread* that forked exits, so Launch() must
// be called from a thread that lives as long as the workers (the main thread).
// Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "controller/launcher.h"
#include "controller/output_pump.h"

namespace rollout::controller {

class LocalLauncher final : public Launcher {
 public:
  LocalLauncher() = default;
  ~LocalLauncher() override;  // StopAll(0)

  absl::Status Launch(const LaunchSpec& spec) override;
  std::vector<WorkerExit> PollExited() override;
  int64_t Pid(int worker_id) const override;
  void StopAll(absl::Duration grace) override;
  bool WorkersAreChildren() const override { return true; }

 private:
  struct Child {
    int64_t pid = 0;
    std::unique_ptr<OutputPump> output;
  };
  WorkerExit Reap(int worker_id, Child& child, int wait_status);

  mutable std::mutex mutex_;
  std::map<int, Child> live_;  // by worker id
};

}  // namespace rollout::controller
