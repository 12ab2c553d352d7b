// `rollout reward-server`: serves a reward function as a RewardService, for
// `reward.remote: host:port`.
//   rollout reward-server [--name NAME | --plugin LIB.so] [--isolation thread|process]
//       [--num_workers N] [--timeout_s S] [--memory_limit_mb M] [--bind ADDR] [--port P]
// Prints "reward server listening on ADDR:PORT" on stdout once it serves (--port 0 picks
// a free port), and stops cleanly on SIGINT or SIGTERM.
// Exit codes: 0 stopped by a signal, 1 the server failed, 2 bad flags.
#pragma once

#include <string>
#include <vector>

namespace rollout::rewards {

int RunRewardServerCommand(const std::vector<std::string>& args);

}  // namespace rollout::rewards
