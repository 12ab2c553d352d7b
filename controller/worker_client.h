// The controller's handle on one registered worker: runs named methods on it by
// streaming batches both ways (common/batch_stream.h), and asks it to shut down.
// Calls are tracked by RunHealth, so a failure anywhere in the run cancels them;
// errors then report that root cause rather than "cancelled" or "connection reset".
// Thread-safe (one gRPC channel, one call at a time per method invocation).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/batch.h"
#include "controller/run_health.h"
#include "controller/worker_registry.h"
#include "proto/runtime.grpc.pb.h"

namespace rollout::controller {

class WorkerClient {
 public:
  // `health` must outlive the client.
  WorkerClient(WorkerInfo info, std::string run_token, RunHealth* health);

  // Errors name the worker and the method.
  absl::StatusOr<Batch> Call(const std::string& method, const Batch& input);
  absl::Status Shutdown(const std::string& reason, absl::Duration timeout);

  const WorkerInfo& info() const { return info_; }

 private:
  absl::StatusOr<Batch> Exchange(grpc::ClientContext* context, const std::string& method,
                                 const Batch& input);

  const WorkerInfo info_;
  const std::string run_token_;
  RunHealth* const health_;
  std::unique_ptr<wire::Worker::Stub> stub_;
};

}  // namespace rollout::controller
