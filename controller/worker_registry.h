// What the controller knows about each planned worker: its slot in the placement,
// whether and where it registered, and when it last sent a heartbeat.
// Thread-safe: the Controller service writes, the runtime and monitor read.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "controller/placement.h"
#include "proto/runtime.pb.h"

namespace rollout::controller {

struct WorkerInfo {
  WorkerSlot slot;
  bool registered = false;
  std::string address;  // host:port of its Worker service
  int64_t pid = 0;
  std::string hostname;
  absl::Time last_heartbeat;
};

// "worker 2 (pool gpu, rank 1/2, actor+rollout+ref, pid 4242)"
std::string DescribeWorker(const WorkerInfo& info);

class WorkerRegistry {
 public:
  explicit WorkerRegistry(std::vector<WorkerSlot> slots);

  // InvalidArgument for an unknown worker id, AlreadyExists for a second registration.
  absl::Status Register(const wire::RegisterRequest& request);
  // NotFound for an id that is unknown or not registered.
  absl::Status Heartbeat(int worker_id);

  // Blocks until every worker registered (OK), `deadline` passed (DeadlineExceeded
  // naming the missing workers) or `failure()` returns an error (that error). Polls
  // `failure` every 50 ms.
  absl::Status WaitForAll(absl::Time deadline, const std::function<absl::Status()>& failure);

  // Registered workers whose last heartbeat is older than `timeout`.
  std::vector<WorkerInfo> Silent(absl::Duration timeout) const;
  std::vector<WorkerInfo> Snapshot() const;
  WorkerInfo Get(int worker_id) const;

 private:
  mutable absl::Mutex mutex_;
  std::vector<WorkerInfo> workers_ ABSL_GUARDED_BY(mutex_);  // index = worker id
};

}  // namespace rollout::controller
