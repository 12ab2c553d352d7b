#include "workers/controller_link.h"

#include <unistd.h>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/run_token.h"

namespace rollout::workers {

ControllerLink::ControllerLink(ControllerLinkOptions options)
    : options_(std::move(options)),
      stub_(wire::Controller::NewStub(grpc::CreateChannel(
          options_.controller_address, grpc::InsecureChannelCredentials()))) {}

ControllerLink::~ControllerLink() {
  if (heartbeat_thread_.joinable()) {
    stop_.Notify();
    heartbeat_thread_.join();
  }
}

absl::StatusOr<wire::RegisterReply> ControllerLink::Register(const std::string& worker_address,
                                                             absl::Time deadline) {
  wire::RegisterRequest request;
  request.set_worker_id(options_.worker_id);
  request.set_address(worker_address);
  request.set_pid(getpid());
  char hostname[256] = {0};
  gethostname(hostname, sizeof(hostname) - 1);
  request.set_hostname(hostname);

  while (true) {
    grpc::ClientContext context;
    AttachRunToken(options_.run_token, &context);
    context.set_deadline(absl::ToChronoTime(deadline));
    context.set_wait_for_ready(true);  // the controller's server may still be starting
    wire::RegisterReply reply;
    absl::Status status = FromGrpcStatus(stub_->Register(&context, request, &reply));
    if (status.ok()) return reply;
    if (status.code() != absl::StatusCode::kUnavailable || absl::Now() >= deadline) {
      return absl::Status(status.code(),
                          absl::StrCat("registering with the controller at ",
                                       options_.controller_address, ": ", status.message()));
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
}

void ControllerLink::StartHeartbeats(std::function<void(const std::string&)> on_lost) {
  on_lost_ = std::move(on_lost);
  heartbeat_thread_ = std::thread([this] { HeartbeatLoop(); });
}

void ControllerLink::HeartbeatLoop() {
  absl::Time last_success = absl::Now();
  std::string last_error;
  while (!stop_.WaitForNotificationWithTimeout(options_.heartbeat_interval)) {
    if (options_.parent_pid != 0 && getppid() != options_.parent_pid) {
      on_lost_(absl::StrCat("the launching process (pid ", options_.parent_pid, ") is gone"));
      return;
    }
    grpc::ClientContext context;
    AttachRunToken(options_.run_token, &context);
    context.set_deadline(absl::ToChronoTime(absl::Now() + options_.heartbeat_interval));
    wire::HeartbeatRequest request;
    request.set_worker_id(options_.worker_id);
    wire::HeartbeatReply reply;
    grpc::Status status = stub_->Heartbeat(&context, request, &reply);
    if (status.ok()) {
      last_success = absl::Now();
      continue;
    }
    last_error = status.error_message();
    if (absl::Now() - last_success > options_.heartbeat_timeout) {
      on_lost_(absl::StrCat("no answer from the controller at ", options_.controller_address,
                            " for ", absl::FormatDuration(absl::Now() - last_success), " (",
                            last_error, ")"));
      return;
    }
  }
}

}  // namespace rollout::workers
