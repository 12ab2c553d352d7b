#include "workers/controller_rendezvous.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/run_token.h"

namespace rollout::workers {
namespace {

constexpr absl::Duration kRpcTimeout = absl::Seconds(10);
constexpr absl::Duration kPollInterval = absl::Milliseconds(20);

}  // namespace

ControllerRendezvous::ControllerRendezvous(const std::string& controller_address, std::string run_token)
    : controller_address_(controller_address),
      run_token_(std::move(run_token)),
      stub_(wire::Controller::NewStub(
          grpc::CreateChannel(controller_address, grpc::InsecureChannelCredentials()))) {}

absl::Status ControllerRendezvous::Set(const std::string& key, const std::string& value) {
  grpc::ClientContext context;
  AttachRunToken(run_token_, &context);
  context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcTimeout));
  wire::StoreSetRequest request;
  request.set_key(key);
  request.set_value(value);
  wire::StoreSetReply reply;
  const absl::Status status = FromGrpcStatus(stub_->StoreSet(&context, request, &reply));
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("writing rendezvous key ", key, " at the controller ",
                                                  controller_address_, ": ", status.message()));
}

absl::StatusOr<std::string> ControllerRendezvous::Get(const std::string& key, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  wire::StoreGetRequest request;
  request.set_key(key);
  while (true) {
    grpc::ClientContext context;
    AttachRunToken(run_token_, &context);
    context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcTimeout));
    wire::StoreGetReply reply;
    const absl::Status status = FromGrpcStatus(stub_->StoreGet(&context, request, &reply));
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat("reading rendezvous key ", key, " at the controller ",
                                                      controller_address_, ": ", status.message()));
    }
    if (reply.found()) return reply.value();
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("rendezvous key ", key, " was not written within ",
                                                      absl::FormatDuration(timeout),
                                                      " (a peer worker did not get there)"));
    }
    absl::SleepFor(kPollInterval);
  }
}

}  // namespace rollout::workers
