#include "workers/worker_service.h"

#include "common/batch_stream.h"
#include "common/grpc_status.h"
#include "common/logging.h"
#include "common/run_token.h"

namespace rollout::workers {

WorkerService::WorkerService(std::string run_token, MethodRegistry* registry,
                             absl::Notification* shutdown_requested)
    : run_token_(std::move(run_token)),
      registry_(registry),
      shutdown_requested_(shutdown_requested) {}

grpc::Status WorkerService::Call(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<wire::CallChunk, wire::CallChunk>* stream) {
  if (absl::Status ok = CheckRunToken(run_token_, *context); !ok.ok()) return ToGrpcStatus(ok);
  std::string method;
  BatchAssembler assembler;
  wire::CallChunk chunk;
  bool first = true;
  while (stream->Read(&chunk)) {
    if (first) method = chunk.method();
    first = false;
    if (absl::Status added = assembler.Add(chunk.batch()); !added.ok()) {
      return ToGrpcStatus(added);
    }
  }
  absl::StatusOr<Batch> input = assembler.Finish();
  if (!input.ok()) return ToGrpcStatus(input.status());

  absl::StatusOr<Batch> output = registry_->Invoke(method, *input);
  if (!output.ok()) {
    ROLLOUT_LOG(WARNING) << method << " failed: " << output.status().message();
    return ToGrpcStatus(output.status());
  }
  absl::Status written = WriteBatch(*output, [stream](wire::BatchChunk&& part) {
    wire::CallChunk reply;
    *reply.mutable_batch() = std::move(part);
    return stream->Write(reply);
  });
  return ToGrpcStatus(written);
}

grpc::Status WorkerService::Shutdown(grpc::ServerContext* context,
                                     const wire::ShutdownRequest* request,
                                     wire::ShutdownReply* reply) {
  if (absl::Status ok = CheckRunToken(run_token_, *context); !ok.ok()) return ToGrpcStatus(ok);
  ROLLOUT_LOG(INFO) << "shutting down: " << request->reason();
  std::call_once(shutdown_once_, [this] { shutdown_requested_->Notify(); });
  return grpc::Status::OK;
}

}  // namespace rollout::workers
