// The reward runner a recipe's `reward` section asks for: a RewardService when
// reward.remote is set, else helper processes (isolation: process) or threads
// (isolation: thread) running reward.plugin, reward.name, or data_source routing.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "proto/recipe.pb.h"
#include "rewards/reward_runner.h"

namespace rollout::rewards {

// InvalidArgument when reward.remote is combined with reward.name or reward.plugin
// (those are the server's to choose); the selector's, plug-in loader's or helpers'
// errors otherwise. `rollout_binary` runs the helpers of isolation: process (empty:
// this executable).
absl::StatusOr<std::unique_ptr<RewardRunner>> CreateRewardRunner(
    const config::RewardConfig& config, const std::string& rollout_binary = "");

}  // namespace rollout::rewards
