// The run's health: the first fatal event (a worker died, went silent, Ctrl-C) and
// the client calls in flight, so that event can cancel them at once. Every path that
// waits on workers checks it, which is how the controller stops within seconds of a
// worker's death instead of hanging on a call that will never return.
// Thread-safe.
#pragma once

#include <set>

#include <grpcpp/client_context.h>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace rollout::controller {

class RunHealth {
 public:
  // Records `status` if it is the first failure and cancels every tracked call.
  void Fail(absl::Status status);
  // OK while healthy, else the first failure.
  absl::Status status() const;
  // Blocks until a failure is recorded or `timeout` passes; true on failure.
  bool WaitForFailure(absl::Duration timeout) const;

  // Registers a call about to start; returns the failure instead when the run has
  // already failed (the call must then not start). Pair with Untrack().
  absl::Status Track(grpc::ClientContext* context);
  void Untrack(grpc::ClientContext* context);

 private:
  mutable absl::Mutex mutex_;
  absl::Status failure_ ABSL_GUARDED_BY(mutex_);
  std::set<grpc::ClientContext*> in_flight_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace rollout::controller
