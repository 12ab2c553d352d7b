// RewardInput / ScoredSample <-> their wire messages (proto/reward.proto), for the
// reward service and the helper processes of process isolation.
#pragma once

#include "proto/reward.pb.h"
#include "rewards/reward_runner.h"

namespace rollout::rewards {

wire::RewardSample ToWire(const RewardInput& input);
RewardInput FromWire(const wire::RewardSample& sample);

wire::RewardResult ToWire(const ScoredSample& result);
ScoredSample FromWire(const wire::RewardResult& result);

}  // namespace rollout::rewards
