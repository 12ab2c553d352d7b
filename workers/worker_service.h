// gRPC adapter for the Worker service (proto/runtime.proto): checks the run token,
// reassembles the request batch from its chunk stream, runs the named method from
// the MethodRegistry and streams the result back. No domain logic lives here.
#pragma once

#include <mutex>
#include <string>

#include "absl/synchronization/notification.h"
#include "proto/runtime.grpc.pb.h"
#include "workers/method_registry.h"

namespace rollout::workers {

class WorkerService final : public wire::Worker::Service {
 public:
  // `registry` and `shutdown_requested` must outlive the service; Shutdown calls
  // notify `shutdown_requested` (the worker's main loop stops the server).
  WorkerService(std::string run_token, MethodRegistry* registry,
                absl::Notification* shutdown_requested);

  grpc::Status Call(grpc::ServerContext* context,
                    grpc::ServerReaderWriter<wire::CallChunk, wire::CallChunk>* stream) override;
  grpc::Status Shutdown(grpc::ServerContext* context, const wire::ShutdownRequest* request,
                        wire::ShutdownReply* reply) override;

 private:
  const std::string run_token_;
  MethodRegistry* const registry_;
  absl::Notification* const shutdown_requested_;
  std::once_flag shutdown_once_;  // several Shutdown calls notify once
};

}  // namespace rollout::workers
