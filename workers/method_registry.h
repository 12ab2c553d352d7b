// The methods a worker process answers, by name ("diag.echo", "actor.compute_log_prob",
// ...). Diagnostics register at start-up; roles register theirs when the controller
// initialises them (worker.init_roles), while the server already runs; the gRPC
// service looks them up per call.
//
// Invoke() runs one method at a time (a worker's device state is not safe for
// concurrent use) with the worker's device current — the calling gRPC thread's CUDA
// device would otherwise be GPU 0, and kernels launched on the current stream would run
// there — and turns LibTorch exceptions into Internal errors naming the method, so
// nothing thrown inside a method crosses the worker boundary.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "absl/status/statusor.h"
#include "common/batch.h"

namespace rollout::workers {

using WorkerMethod = std::function<absl::StatusOr<Batch>(const Batch& input)>;

class MethodRegistry {
 public:
  explicit MethodRegistry(c10::Device device = c10::Device(c10::kCPU)) : device_(device) {}

  // AlreadyExists when the name is taken.
  absl::Status Register(const std::string& name, WorkerMethod method);
  // NotFound (listing the known names) for an unknown method.
  absl::StatusOr<Batch> Invoke(const std::string& name, const Batch& input);
  std::vector<std::string> Names() const;

 private:
  mutable std::mutex methods_mutex_;  // guards methods_; never held while a method runs
  std::map<std::string, WorkerMethod> methods_;
  std::mutex invoke_mutex_;
  const c10::Device device_;
};

}  // namespace rollout::workers
