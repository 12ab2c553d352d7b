// What a reward function is: it scores one response, as verl's compute_score does,
// from the sample's data_source, prompt, response, ground truth and extra info.
// Built-ins (rewards/builtin_rewards.h) and plug-ins implement it; the registry
// (rewards/reward_registry.h) finds one by name or routes by data_source.
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace rollout::rewards {

struct RewardInput {
  std::string data_source;   // e.g. "openai/gsm8k"
  std::string prompt;        // the dataset's prompt: its text, or a chat prompt's JSON (controller/dataset.h)
  std::string response;      // the decoded response
  std::string ground_truth;  // the dataset's reference answer, as text
  std::string extra_info;    // a JSON object as text, or empty
};

struct RewardOutput {
  double score = 0;
  // Named extra values reported as metrics (e.g. "acc", "format"), verl's reward_extra_info.
  std::map<std::string, double> extra;
};

class RewardFunction {
 public:
  virtual ~RewardFunction() = default;
  virtual const std::string& name() const = 0;
  // Thread-safe: the runner calls it concurrently. A malformed response is a score
  // (usually 0), not an error; errors are for inputs the function cannot score at all
  // (e.g. a ground truth it cannot parse), with a message naming the problem.
  virtual absl::StatusOr<RewardOutput> Score(const RewardInput& input) const = 0;
};

}  // namespace rollout::rewards
