// `reward.isolation: process`: scores each sample in a helper process (`rollout
// reward-helper`), so a segfault, abort, endless loop or runaway allocation in a reward
// function costs that sample (score 0, counted in reward/errors or reward/timeouts) and a
// helper restart, never the training run. Slower than threads by a round trip per sample.
//
// The helpers are started, fed and killed by one thread the runner owns, so they die
// with the runner (and with this process) whichever thread calls Score.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "rewards/reward_runner.h"
#include "rewards/reward_selector.h"

namespace rollout::rewards {

struct ProcessRunnerOptions {
  RewardSpec spec;  // what each helper loads
  // The `rollout` executable that runs the helpers; empty: this executable.
  std::string rollout_binary;
  int num_workers = 0;  // helper processes; 0: one per core
  absl::Duration timeout = absl::Seconds(10);
  absl::Duration startup_timeout = absl::Seconds(60);
  // What a reward function may allocate in its helper; 0: no limit.
  int64_t memory_limit_mb = 4096;
};

class ProcessRewardRunner final : public RewardRunner {
 public:
  // Starts the helpers and waits until each has loaded the reward function; fails with
  // the reason when one cannot (a plug-in that does not load, an unknown name).
  static absl::StatusOr<std::unique_ptr<ProcessRewardRunner>> Create(
      const ProcessRunnerOptions& options);
  ~ProcessRewardRunner() override;  // kills the helpers

  absl::StatusOr<std::vector<ScoredSample>> Score(const std::vector<RewardInput>& samples) override;

 private:
  ProcessRewardRunner() = default;
  void Serve(const ProcessRunnerOptions& options);  // the helpers' thread

  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<absl::Status> started_;               // set once the helpers are up (or not)
  const std::vector<RewardInput>* request_ = nullptr;  // the batch to score
  std::optional<absl::StatusOr<std::vector<ScoredSample>>> reply_;
  bool stopping_ = false;
};

}  // namespace rollout::rewards
