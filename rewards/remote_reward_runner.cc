#include "rewards/remote_reward_runner.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <algorithm>
#include <climits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "proto/reward.grpc.pb.h"
#include "rewards/reward_wire.h"

namespace rollout::rewards {
namespace {

// "host:port": a non-empty host (an IPv6 one in brackets) and a port in 1..65535.
bool IsHostPort(absl::string_view address) {
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos || colon == 0) return false;
  const absl::string_view host = address.substr(0, colon);
  const absl::string_view port = address.substr(colon + 1);
  if (host.find(':') != absl::string_view::npos && (host.front() != '[' || host.back() != ']')) {
    return false;
  }
  if (port.empty() || !std::all_of(port.begin(), port.end(), absl::ascii_isdigit)) {
    return false;
  }
  int number = 0;
  return absl::SimpleAtoi(port, &number) && number >= 1 && number <= 65535;
}

bool IsRetryable(absl::StatusCode code) {
  return code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kDeadlineExceeded;
}

// The wait before the last attempt: initial_backoff, doubled for each retry after the first.
absl::Duration LongestBackoff(const RemoteRunnerOptions& options) {
  absl::Duration backoff = options.initial_backoff;
  for (int retry = 2; retry < options.max_attempts && backoff < absl::Hours(1); ++retry) backoff *= 2;
  return backoff;
}

int ClampedMillis(absl::Duration duration) {
  return static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(duration), INT_MAX));
}

}  // namespace

struct RemoteRewardRunner::Impl {
  RemoteRunnerOptions options;
  std::unique_ptr<wire::RewardService::Stub> stub;

  // One Score RPC with the retries of the options; the error names the server.
  absl::StatusOr<wire::ScoreReply> Call(const wire::ScoreRequest& request) const;
  // Call, then appends one result per sample of `request` to `results`.
  absl::Status Send(const wire::ScoreRequest& request, std::vector<ScoredSample>* results) const;
};

absl::StatusOr<wire::ScoreReply> RemoteRewardRunner::Impl::Call(
    const wire::ScoreRequest& request) const {
  const std::string server = absl::StrCat("reward server ", options.address);
  absl::Duration backoff = options.initial_backoff;
  absl::Status last;
  for (int attempt = 1; attempt <= options.max_attempts; ++attempt) {
    if (attempt > 1) {
      absl::SleepFor(backoff);
      backoff *= 2;
    }
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + options.deadline));
    wire::ScoreReply reply;
    last = FromGrpcStatus(stub->Score(&context, request, &reply));
    if (last.ok()) return reply;
    if (!IsRetryable(last.code())) return WithContext(last, server);
  }
  return absl::Status(last.code(), absl::StrCat(server, ": unreachable after ", options.max_attempts,
                                                " attempts: ", last.message()));
}

absl::Status RemoteRewardRunner::Impl::Send(const wire::ScoreRequest& request,
                                            std::vector<ScoredSample>* results) const {
  ASSIGN_OR_RETURN(const wire::ScoreReply reply, Call(request));
  if (reply.results_size() != request.samples_size()) {
    return absl::DataLossError(absl::StrCat("reward server ", options.address, ": ",
                                            reply.results_size(), " results for ",
                                            request.samples_size(), " samples"));
  }
  for (const wire::RewardResult& result : reply.results()) results->push_back(FromWire(result));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<RemoteRewardRunner>> RemoteRewardRunner::Create(
    const RemoteRunnerOptions& options) {
  if (!IsHostPort(options.address)) {
    return absl::InvalidArgumentError(
        absl::StrCat("reward server address '", options.address, "' is not host:port"));
  }
  if (options.max_attempts < 1) {
    return absl::InvalidArgumentError(absl::StrCat("reward server ", options.address,
                                                   ": max_attempts must be at least 1, not ",
                                                   options.max_attempts));
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  // A call on a channel that is waiting to reconnect fails at once, so a retry is only
  // a real attempt when the channel reconnects at least as often as Score retries
  // (gRPC's own schedule starts at 1 s and grows to 2 minutes).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, ClampedMillis(options.initial_backoff));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, ClampedMillis(LongestBackoff(options)));
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->stub = wire::RewardService::NewStub(
      grpc::CreateCustomChannel(options.address, grpc::InsecureChannelCredentials(), args));
  return std::unique_ptr<RemoteRewardRunner>(new RemoteRewardRunner(std::move(impl)));
}

RemoteRewardRunner::RemoteRewardRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

RemoteRewardRunner::~RemoteRewardRunner() = default;

absl::StatusOr<std::vector<ScoredSample>> RemoteRewardRunner::Score(
    const std::vector<RewardInput>& samples) {
  std::vector<ScoredSample> results;
  results.reserve(samples.size());
  wire::ScoreRequest request;
  size_t request_bytes = 0;
  for (const RewardInput& input : samples) {
    wire::RewardSample sample = ToWire(input);
    const size_t bytes = sample.ByteSizeLong();
    // A sample larger than max_request_bytes still goes, alone.
    if (request.samples_size() > 0 && request_bytes + bytes > impl_->options.max_request_bytes) {
      RETURN_IF_ERROR(impl_->Send(request, &results));
      request.Clear();
      request_bytes = 0;
    }
    *request.add_samples() = std::move(sample);
    request_bytes += bytes;
  }
  if (request.samples_size() > 0) RETURN_IF_ERROR(impl_->Send(request, &results));
  return results;
}

}  // namespace rollout::rewards
