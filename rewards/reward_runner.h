// Scores batches of samples for the trainer, with the guarantees training needs: every
// sample gets a result, a sample whose reward function fails, crashes or runs past its
// timeout scores 0 and is counted (`reward/errors`, `reward/timeouts`), and nothing a
// reward function does stops the batch. Implementations: threads in this process
// (thread_reward_runner.h), helper processes (process_reward_runner.h) and a remote
// RewardService (remote_reward_runner.h); CreateRewardRunner (reward_runner_factory.h)
// picks one from the recipe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "rewards/reward_function.h"
#include "rewards/reward_selector.h"

namespace rollout::rewards {

enum class SampleOutcome {
  kOk,
  kError,    // the reward function returned an error, threw, or its helper process died
  kTimeout,  // it ran past the per-sample timeout
};

struct ScoredSample {
  RewardOutput output;  // score 0 and no extras unless kOk
  SampleOutcome outcome = SampleOutcome::kOk;
  std::string error;  // what went wrong, unless kOk
};

class RewardRunner {
 public:
  virtual ~RewardRunner() = default;
  // One result per sample, in order. An error status only when the runner itself
  // cannot score (a helper that cannot be started, a reward server unreachable after
  // its retries); a sample's failure is a result. Calls may not overlap.
  virtual absl::StatusOr<std::vector<ScoredSample>> Score(
      const std::vector<RewardInput>& samples) = 0;
};

// The batch's failure counts, as metrics, and the first failure's message (with its
// sample index) for the log.
struct RewardFailures {
  int64_t timeouts = 0;  // reward/timeouts
  int64_t errors = 0;    // reward/errors
  std::string first;     // "sample 3: gsm8k: ..." or empty
};
RewardFailures CountFailures(const std::vector<ScoredSample>& results);

// A result for a sample that failed: score 0, no extras.
ScoredSample FailedSample(SampleOutcome outcome, std::string error);

// Scores one sample with `selector`; an error status or an exception (bad_alloc
// included) becomes a kError result.
ScoredSample ScoreOrFail(const RewardSelector& selector, const RewardInput& input);

}  // namespace rollout::rewards
