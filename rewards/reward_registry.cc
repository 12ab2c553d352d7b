#include "rewards/reward_registry.h"

#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "rewards/builtin_rewards.h"

namespace rollout::rewards {

RewardRegistry RewardRegistry::WithBuiltins() {
  RewardRegistry registry;
  registry.Register("gsm8k", [] { return MakeGsm8kReward(); });
  registry.Register("countdown", [] { return MakeCountdownReward(); });
  registry.Register("math", [] { return MakeMathReward(); });
  registry.Register("math_dapo", [] { return MakeMathDapoReward(); });
  registry.Register("exact_match", [] { return MakeExactMatchReward(); });
  registry.Register("format", [] { return std::move(MakeFormatReward(FormatOptions())).value(); });
  return registry;
}

void RewardRegistry::Register(const std::string& name, Factory factory) {
  factories_[name] = std::move(factory);
}

std::vector<std::string> RewardRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories_) names.push_back(name);
  return names;
}

absl::StatusOr<std::unique_ptr<RewardFunction>> RewardRegistry::Create(
    const std::string& name) const {
  auto it = factories_.find(name);
  if (it == factories_.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown reward '", name, "'; known: ", absl::StrJoin(Names(), ", ")));
  }
  return it->second();
}

absl::StatusOr<std::string> RewardRegistry::RouteDataSource(const std::string& data_source) const {
  // verl's default_compute_score routes these dataset names.
  static const char* const kMathSources[] = {
      "lighteval/MATH", "DigitalLearningGmbH/MATH-lighteval", "HuggingFaceH4/MATH-500"};
  std::string name;
  if (data_source == "openai/gsm8k") {
    name = "gsm8k";
  } else if (absl::c_linear_search(kMathSources, data_source)) {
    name = "math";
  } else if (data_source == "math_dapo" || absl::StartsWith(data_source, "aime")) {
    name = "math_dapo";
  } else if (absl::StrContains(data_source, "countdown")) {
    name = "countdown";
  } else if (data_source == "arithmetic") {  // `rollout gen-data arithmetic`: the answer alone
    name = "exact_match";
  } else if (factories_.count(data_source) > 0) {
    name = data_source;
  }
  if (name.empty() || factories_.count(name) == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no reward for data_source '", data_source,
        "'; set reward.name, or use a data_source that names a reward (",
        absl::StrJoin(Names(), ", "), ") or a dataset verl routes (openai/gsm8k, lighteval/MATH, aime..., ...countdown...)"));
  }
  return name;
}

}  // namespace rollout::rewards
