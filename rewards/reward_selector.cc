#include "rewards/reward_selector.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "rewards/plugin_reward.h"

namespace rollout::rewards {

absl::StatusOr<std::shared_ptr<const RewardSelector>> RewardSelector::Create(
    const RewardSpec& spec) {
  if (!spec.name.empty() && !spec.plugin.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("give a reward name ('", spec.name,
                                                   "') or a plug-in ('", spec.plugin,
                                                   "'), not both"));
  }
  std::shared_ptr<RewardSelector> selector(new RewardSelector());
  const RewardRegistry& registry = selector->registry_;
  if (!spec.plugin.empty()) {
    ASSIGN_OR_RETURN(selector->fixed_, LoadRewardPlugin(spec.plugin));
  } else if (!spec.name.empty()) {
    ASSIGN_OR_RETURN(selector->fixed_, registry.Create(spec.name));
  } else {
    for (const std::string& name : registry.Names()) {
      ASSIGN_OR_RETURN(selector->routed_[name], registry.Create(name));
    }
  }
  return std::shared_ptr<const RewardSelector>(std::move(selector));
}

std::shared_ptr<const RewardSelector> RewardSelector::Of(std::unique_ptr<RewardFunction> reward) {
  std::shared_ptr<RewardSelector> selector(new RewardSelector());
  selector->fixed_ = std::move(reward);
  return selector;
}

absl::StatusOr<const RewardFunction*> RewardSelector::Select(const RewardInput& input) const {
  if (fixed_ != nullptr) return fixed_.get();
  ASSIGN_OR_RETURN(const std::string name, registry_.RouteDataSource(input.data_source));
  return routed_.at(name).get();
}

absl::StatusOr<RewardOutput> RewardSelector::Score(const RewardInput& input) const {
  ASSIGN_OR_RETURN(const RewardFunction* reward, Select(input));
  absl::StatusOr<RewardOutput> output = reward->Score(input);
  if (!output.ok()) {
    return absl::Status(output.status().code(),
                        absl::StrCat(reward->name(), ": ", output.status().message()));
  }
  return output;
}

}  // namespace rollout::rewards
