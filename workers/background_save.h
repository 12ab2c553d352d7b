// A role's checkpoint write on a thread of its own (actor.checkpoint.async_save), so
// the worker goes on serving methods that only read its state — generation, log-probs
// — while the files are written. Whatever the save reads (weights, optimizer state,
// the update counter, RNG states) must not change until Wait() returned: the workers
// call Wait() first in every method that changes them, and the controller commits the
// checkpoint (manifest, tracker) only after `<role>.wait_checkpoint`.
//
// Not thread-safe: the worker's method thread drives it (methods run one at a time).
#pragma once

#include <string>
#include <thread>

#include "absl/status/status.h"
#include "workers/checkpoint_io.h"

namespace rollout::workers {

class BackgroundSave {
 public:
  BackgroundSave() = default;
  ~BackgroundSave();  // waits for a pending write
  BackgroundSave(const BackgroundSave&) = delete;
  BackgroundSave& operator=(const BackgroundSave&) = delete;

  // Starts SaveRoleCheckpoint(role, parts, dir) with role.device current on the
  // thread. FailedPrecondition while another write is pending.
  absl::Status Start(RoleCheckpoint role, CheckpointParts parts, std::string dir);
  // Blocks until the pending write, if any, is done and returns its status (once;
  // OK when nothing is pending).
  absl::Status Wait();
  bool pending() const { return thread_.joinable(); }

 private:
  std::thread thread_;
  absl::Status result_;  // written by the thread, read after join
};

}  // namespace rollout::workers
