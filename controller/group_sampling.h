// verl's DAPO dynamic sampling (algorithm.filter_groups) across a step's generation
// rounds: each round's prompt groups whose responses all score the same in the filter
// metric are dropped (algorithms::FilterGroups), the others kept, until the step has
// data.train_batch_size prompts; the surplus of the last round is dropped, as verl does.
// Controller arithmetic only; ppo_trainer.cc drives the rounds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/batch.h"
#include "rewards/reward_runner.h"

namespace rollout::controller {

// Each row's value of algorithm.filter_groups.metric: "score" the reward function's
// score, "seq_reward" and "seq_final_reward" the shaped score (`shaped`: after DAPO's
// overlong shaping; the KL penalty in the reward is not combined with the filter), any
// other name the value the reward reports under it ("acc"). InvalidArgument naming the
// metric and the values the reward reports when a row lacks it.
absl::StatusOr<std::vector<double>> FilterMetricValues(const std::string& metric,
                                                       const std::vector<rewards::ScoredSample>& scored,
                                                       const std::vector<double>& shaped);

class KeptGroups {
 public:
  // A step wants `prompts` prompt groups of `rows_per_prompt` rows (rollout.n).
  KeptGroups(int64_t prompts, int64_t rows_per_prompt) : prompts_(prompts), rows_per_prompt_(rows_per_prompt) {}

  // Keeps the groups of `generated` (rows of a group share its "uid" string column)
  // whose `metric` values (one a row) are not all equal, or that have one row.
  absl::Status Add(const Batch& generated, const std::vector<double>& metric);

  int64_t kept_prompts() const { return kept_prompts_; }
  bool full() const { return kept_prompts_ >= prompts_; }

  // The first `prompts` groups kept, in the order they were generated. Only when full().
  absl::StatusOr<Batch> Take() const;

 private:
  int64_t prompts_, rows_per_prompt_;
  int64_t kept_prompts_ = 0;
  std::vector<Batch> kept_;
};

}  // namespace rollout::controller
