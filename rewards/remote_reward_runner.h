// `reward.remote: host:port`: scores batches on a RewardService (proto/reward.proto),
// e.g. `rollout reward-server` on another host, or a server written in another language.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "rewards/reward_runner.h"

namespace rollout::rewards {

struct RemoteRunnerOptions {
  std::string address;                               // host:port
  absl::Duration deadline = absl::Minutes(5);        // per Score RPC
  int max_attempts = 3;                              // per RPC, for retryable failures
  absl::Duration initial_backoff = absl::Milliseconds(500);  // doubles after each failure
  size_t max_request_bytes = size_t{4} << 20;        // larger batches go as several RPCs
};

class RemoteRewardRunner final : public RewardRunner {
 public:
  // InvalidArgument for an address that is not host:port or max_attempts < 1. Does not
  // connect yet.
  static absl::StatusOr<std::unique_ptr<RemoteRewardRunner>> Create(const RemoteRunnerOptions& options);
  ~RemoteRewardRunner() override;

  // Unavailable / DeadlineExceeded failures are retried with backoff; after the last
  // attempt the error names the server and the attempts ("reward server
  // 10.0.0.5:50051: unreachable after 3 attempts: ..."). Other errors are not retried.
  absl::StatusOr<std::vector<ScoredSample>> Score(const std::vector<RewardInput>& samples) override;

 private:
  struct Impl;
  explicit RemoteRewardRunner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rollout::rewards
