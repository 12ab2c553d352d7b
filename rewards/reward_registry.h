// Reward functions by name (`reward.name`), and verl's routing by data_source (the
// default when no name is given, keyed by `data.reward_fn_key`).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "rewards/reward_function.h"

namespace rollout::rewards {

class RewardRegistry {
 public:
  using Factory = std::function<std::unique_ptr<RewardFunction>()>;

  // The built-in rewards (rewards/builtin_rewards.h), by their names.
  static RewardRegistry WithBuiltins();

  // Adds or replaces `name`.
  void Register(const std::string& name, Factory factory);
  std::vector<std::string> Names() const;  // sorted

  // InvalidArgument "unknown reward 'x'; known: a, b, c" for an unregistered name.
  absl::StatusOr<std::unique_ptr<RewardFunction>> Create(const std::string& name) const;

  // The reward verl's default scorer uses for a data_source: openai/gsm8k -> gsm8k;
  // the MATH datasets (lighteval/MATH, DigitalLearningGmbH/MATH-lighteval,
  // HuggingFaceH4/MATH-500, ...) -> math; math_dapo and anything starting with "aime"
  // (DAPO-Math-17k, AIME 2024) -> math_dapo; anything containing "countdown" ->
  // countdown; "arithmetic" (`rollout gen-data arithmetic`) -> exact_match; a
  // data_source that is itself a registered name -> that reward.
  // InvalidArgument naming the data_source when none applies.
  absl::StatusOr<std::string> RouteDataSource(const std::string& data_source) const;

 private:
  std::map<std::string, Factory> factories_;
};

}  // namespace rollout::rewards
