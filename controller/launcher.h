// Launcher: starts worker processes and reports how they end. The local launcher
// forks/execs on this machine (controller/local_launcher.h); the Slurm launcher starts
// each worker as a step of the allocation it runs in (controller/slurm_launcher.h).
//
// Contract: Launch() returns once the process exists (not once it registered).
// PollExited() never blocks and reports each worker's end exactly once. StopAll()
// waits up to `grace` for live workers to end on their own (the caller has asked
// them to shut down), kills those left with SIGKILL, and reaps them all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace rollout::controller {

struct LaunchSpec {
  int worker_id = 0;
  std::string description;                // "worker 2 (pool gpu, rank 1)" for messages
  std::vector<std::string> argv;          // argv[0] is the program path
  std::vector<std::string> env;           // "KEY=value" added to this process's environment
  int node = 0;                           // the placement slot's node (0 on one machine)
};

struct WorkerExit {
  int worker_id = 0;
  int64_t pid = 0;
  std::string how;                        // "exited with status 3", "was killed by signal 9 (SIGKILL)"
  bool clean = false;                     // exited with status 0
  std::vector<std::string> stderr_tail;   // its last output lines, oldest first
};

class Launcher {
 public:
  virtual ~Launcher() = default;
  virtual absl::Status Launch(const LaunchSpec& spec) = 0;
  virtual std::vector<WorkerExit> PollExited() = 0;
  // Process id of a live worker, 0 when unknown or ended.
  virtual int64_t Pid(int worker_id) const = 0;
  virtual void StopAll(absl::Duration grace) = 0;
  // Whether each worker's parent process is this one, so that a worker can watch for
  // its parent's end (under srun its parent is Slurm's step daemon).
  virtual bool WorkersAreChildren() const = 0;
};

}  // namespace rollout::controller
