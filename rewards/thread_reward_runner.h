// `reward.isolation: thread`: scores a batch on a pool of threads in this process, the
// fastest way to run trusted reward functions.
//
// A sample gets `timeout` from when a thread starts it. A thread cannot be stopped, so a
// sample that runs past its timeout scores 0 (counted as a timeout) and its thread is
// abandoned — it finishes on its own and its result is dropped — and a new thread takes
// its place. Abandoned threads that never finish (an endless loop) each keep a core
// busy; once `max_stuck_calls` of them are running, Score fails and says to use
// `reward.isolation: process`, which can kill them. A reward function that throws is an
// error result, like one that returns an error.
#pragma once

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "rewards/reward_runner.h"
#include "rewards/reward_selector.h"

namespace rollout::rewards {

struct ThreadRunnerOptions {
  int num_workers = 0;  // 0: one per core
  absl::Duration timeout = absl::Seconds(10);
  int max_stuck_calls = 0;  // 0: 4 x num_workers
};

class ThreadRewardRunner final : public RewardRunner {
 public:
  ThreadRewardRunner(std::shared_ptr<const RewardSelector> selector,
                     const ThreadRunnerOptions& options);
  // Stops and joins the workers; abandoned threads are left to finish on their own
  // (they keep the selector alive).
  ~ThreadRewardRunner() override;

  absl::StatusOr<std::vector<ScoredSample>> Score(const std::vector<RewardInput>& samples) override;

 private:
  struct Shared;
  struct Worker;

  static void WorkerLoop(std::shared_ptr<Shared> shared, std::shared_ptr<Worker> self);
  void StartWorker();
  // Marks every running sample past its timeout as timed out and replaces its thread.
  // Call with the lock held.
  void AbandonOverdue(std::chrono::steady_clock::time_point now);
  // FailedPrecondition once more than max_stuck_calls_ abandoned calls still run. Call
  // with the lock held.
  absl::Status CheckStuck() const;

  std::shared_ptr<Shared> shared_;
  std::vector<std::shared_ptr<Worker>> workers_;
  int max_stuck_calls_;
};

}  // namespace rollout::rewards
