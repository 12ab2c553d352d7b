// WorkerGroup: the workers of one resource pool, driven together (verl's
// RayWorkerGroup). Dispatch modes:
//   CallAll       one-to-all: every worker gets the same input; results by rank.
//   CallDpSplit   data parallel: the input is chunked into world-size equal parts
//                 (padding with leading rows when needed), part r goes to rank r, the
//                 results are concatenated in rank order and the padding dropped.
//   CallDpShards  data parallel for methods that return no rows (training steps, which
//                 return metrics): the input must split evenly (padding would train on
//                 rows twice); the results come back by rank.
//   CallRankZero  only rank 0 runs the method.
//   CallEach      every worker gets an input of its own.
// Calls to the workers run concurrently. A call that fails while others are in flight
// fails the run (RunHealth), which cancels them: its peers may be waiting for it in a
// collective (a data-parallel all-reduce, a weight broadcast) that would never
// complete — NCCL does not time out. The first error is returned, the failed call's
// own rather than the cancellations it caused. Thread-compatible.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/batch.h"
#include "controller/run_health.h"
#include "controller/worker_client.h"

namespace rollout::controller {

class WorkerGroup {
 public:
  // `workers` ordered by rank; non-owning, as is `health` (the run's, which the
  // workers' clients track their calls with); both must outlive the group.
  WorkerGroup(std::string pool, std::vector<WorkerClient*> workers, RunHealth* health);

  const std::string& pool() const { return pool_; }
  int world_size() const { return static_cast<int>(workers_.size()); }
  const std::vector<WorkerClient*>& workers() const { return workers_; }
  RunHealth* health() const { return health_; }

  absl::StatusOr<std::vector<Batch>> CallAll(const std::string& method, const Batch& input);
  // Each DP result must have as many rows as its input part.
  absl::StatusOr<Batch> CallDpSplit(const std::string& method, const Batch& input);
  // InvalidArgument when the rows do not split evenly over the world.
  absl::StatusOr<std::vector<Batch>> CallDpShards(const std::string& method, const Batch& input);
  absl::StatusOr<Batch> CallRankZero(const std::string& method, const Batch& input);
  // Runs method on worker r with inputs[r] (one input per worker), concurrently.
  absl::StatusOr<std::vector<Batch>> CallEach(const std::string& method,
                                              const std::vector<Batch>& inputs);

 private:

  std::string pool_;
  std::vector<WorkerClient*> workers_;
  RunHealth* health_;
};

// Runs each of `calls` on a thread of its own and waits for all of them: for calls on
// several groups that meet in one collective (each blocks until all have arrived).
// As within a group, the first call to fail fails `health`, cancelling the others;
// returns the first error in the order of `calls`.
absl::Status RunConcurrently(RunHealth* health, const std::vector<std::function<absl::Status()>>& calls);

}  // namespace rollout::controller
