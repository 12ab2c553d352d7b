// The helper processes of `reward.isolation: process` and the scoring of one batch on
// them: each idle helper is handed the next sample; a helper that dies while scoring
// (segfault, abort, out of memory) gives that sample an error result, one that runs
// past the timeout is killed and gives a timeout result, and either way a new helper
// takes its place. Not thread-safe: ProcessRewardRunner drives it from one thread,
// which must also be the thread that destroys it (helpers die with that thread).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "rewards/helper_process.h"
#include "rewards/reward_runner.h"

namespace rollout::rewards {

struct HelperPoolOptions {
  std::vector<std::string> helper_argv;  // `rollout reward-helper ...`
  int num_helpers = 1;
  absl::Duration timeout = absl::Seconds(10);          // per sample
  absl::Duration startup_timeout = absl::Seconds(60);  // until a helper's reward is loaded
};

class HelperPool {
 public:
  explicit HelperPool(HelperPoolOptions options);

  // Starts every helper and waits until each has loaded its reward function. The first
  // failure as FailedPrecondition ("reward helper: <why>").
  absl::Status Start();

  // One result per sample. Fails only when a replacement helper cannot be started.
  absl::StatusOr<std::vector<ScoredSample>> Score(const std::vector<RewardInput>& samples);

 private:
  using Clock = std::chrono::steady_clock;
  enum class State { kStarting, kIdle, kBusy };
  struct Helper {
    std::unique_ptr<HelperProcess> process;
    State state = State::kStarting;
    size_t sample = 0;             // kBusy: the sample in hand
    Clock::time_point deadline;    // kStarting: to be ready; kBusy: to answer
  };
  // What Score is filling in; null while starting.
  struct Batch {
    const std::vector<RewardInput>* samples;
    std::vector<ScoredSample> results;
    size_t next = 0;      // the next sample to hand out
    size_t finished = 0;  // samples with a result
  };

  absl::Status Launch(Helper& helper);
  // Hands samples to idle helpers.
  absl::Status Dispatch(Batch& batch);
  // Waits for the next answer or deadline and handles what happened.
  absl::Status Pump(Batch* batch);
  absl::Status HandleReadable(Helper& helper, Batch* batch);
  absl::Status HandleOverdue(Helper& helper, Batch* batch);
  // Records the end of `helper`'s sample (if busy) as `outcome` and starts a new helper.
  absl::Status Replace(Helper& helper, Batch* batch, SampleOutcome outcome, const std::string& error);

  HelperPoolOptions options_;
  std::vector<Helper> helpers_;
};

}  // namespace rollout::rewards
