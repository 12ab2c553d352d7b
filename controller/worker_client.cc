#include "controller/worker_client.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include "absl/strings/str_cat.h"
#include "common/batch_stream.h"
#include "common/grpc_status.h"
#include "common/run_token.h"
#include "common/status_macros.h"

namespace rollout::controller {
namespace {

// How long a call that lost its worker waits for the WorkerMonitor's report (it
// polls every 100 ms) before returning the bare transport error.
constexpr absl::Duration kDeathReportWait = absl::Seconds(1);

}  // namespace

WorkerClient::WorkerClient(WorkerInfo info, std::string run_token, RunHealth* health)
    : info_(std::move(info)), run_token_(std::move(run_token)), health_(health) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  stub_ = wire::Worker::NewStub(
      grpc::CreateCustomChannel(info_.address, grpc::InsecureChannelCredentials(), args));
}

absl::StatusOr<Batch> WorkerClient::Exchange(grpc::ClientContext* context,
                                             const std::string& method, const Batch& input) {
  auto stream = stub_->Call(context);
  bool first = true;
  absl::Status written = WriteBatch(input, [&](wire::BatchChunk&& part) {
    wire::CallChunk chunk;
    if (first) chunk.set_method(method);
    first = false;
    *chunk.mutable_batch() = std::move(part);
    return stream->Write(chunk);
  });
  stream->WritesDone();
  BatchAssembler assembler;
  wire::CallChunk reply;
  absl::Status assembled = absl::OkStatus();
  while (stream->Read(&reply)) {
    if (assembled.ok()) assembled = assembler.Add(reply.batch());
  }
  // The call's own status explains a broken write or read better than either does.
  RETURN_IF_ERROR(FromGrpcStatus(stream->Finish()));
  RETURN_IF_ERROR(written);
  RETURN_IF_ERROR(assembled);
  return assembler.Finish();
}

absl::StatusOr<Batch> WorkerClient::Call(const std::string& method, const Batch& input) {
  grpc::ClientContext context;
  AttachRunToken(run_token_, &context);
  RETURN_IF_ERROR(health_->Track(&context));
  absl::StatusOr<Batch> result = Exchange(&context, method, input);
  health_->Untrack(&context);
  if (result.ok()) return result;
  // A call that failed because the run failed reports why the run failed. A lost
  // connection usually means the worker died: give the monitor a moment to say how.
  const absl::StatusCode code = result.status().code();
  if (code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kCancelled) {
    health_->WaitForFailure(kDeathReportWait);
  }
  if (absl::Status run = health_->status(); !run.ok()) return run;
  return WithContext(result.status(), absl::StrCat(DescribeWorker(info_), ", ", method));
}

absl::Status WorkerClient::Shutdown(const std::string& reason, absl::Duration timeout) {
  grpc::ClientContext context;
  AttachRunToken(run_token_, &context);
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  wire::ShutdownRequest request;
  request.set_reason(reason);
  wire::ShutdownReply reply;
  return WithContext(FromGrpcStatus(stub_->Shutdown(&context, request, &reply)),
                     absl::StrCat("shutting down ", DescribeWorker(info_)));
}

}  // namespace rollout::controller
