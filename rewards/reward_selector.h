// The reward function(s) one run uses: a plug-in (`reward.plugin`), a registered
// function (`reward.name`), or — with neither — the function each sample's data_source
// routes to (verl's default scorer). Everything is created up front, so choosing and
// scoring need no lock. Immutable and thread-safe once created.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "rewards/reward_function.h"
#include "rewards/reward_registry.h"

namespace rollout::rewards {

struct RewardSpec {
  std::string name;    // a registered reward (rewards/reward_registry.h)
  std::string plugin;  // path of a plug-in library (rewards/plugin_api.h)
};

class RewardSelector {
 public:
  // InvalidArgument when both name and plugin are given or the name is unknown; the
  // plug-in loader's errors for a plug-in that cannot be loaded.
  static absl::StatusOr<std::shared_ptr<const RewardSelector>> Create(const RewardSpec& spec);
  // Always `reward` — a C++ reward function of one's own, scored by any in-process runner.
  static std::shared_ptr<const RewardSelector> Of(std::unique_ptr<RewardFunction> reward);

  // The function that scores `input`; InvalidArgument naming the data_source when
  // routing finds none.
  absl::StatusOr<const RewardFunction*> Select(const RewardInput& input) const;

  // Select + Score; an error names the reward ("gsm8k: ...").
  absl::StatusOr<RewardOutput> Score(const RewardInput& input) const;

 private:
  RewardSelector() = default;

  std::unique_ptr<RewardFunction> fixed_;  // the named or plug-in reward; null: routing
  RewardRegistry registry_ = RewardRegistry::WithBuiltins();  // routes data_sources
  std::map<std::string, std::unique_ptr<RewardFunction>> routed_;  // by name, for routing
};

}  // namespace rollout::rewards
