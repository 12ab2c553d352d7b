// `rollout reward-helper`: a helper process of `reward.isolation: process`, started by
// ProcessRewardRunner (process_reward_runner.h), never by hand.
//   rollout reward-helper [--name NAME | --plugin LIB.so] [--memory_limit_mb N]
// Its stdin is a stream socket carrying frames (frame_io.h). It first sends one
// RewardResult: OK when its reward function is loaded, ERROR with the reason when not
// (then exits 2). After that, for every RewardSample it reads, it sends back the
// RewardResult; it exits 0 at end of stream. The memory limit caps what the reward
// function may allocate (address space beyond what the helper had when ready), so a
// runaway allocation fails inside the helper instead of exhausting the machine.
#pragma once

#include <string>
#include <vector>

namespace rollout::rewards {

int RunRewardHelperCommand(const std::vector<std::string>& args);

}  // namespace rollout::rewards
