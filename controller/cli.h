// Entry points of the controller-side `rollout` subcommands. Each takes the
// arguments after its name, prints errors as one line, and returns the exit code:
// 0 success, 1 the run failed, 2 bad usage or recipe, 130 interrupted.
#pragma once

#include <string>
#include <vector>

namespace rollout::controller {

constexpr int kExitOk = 0;
constexpr int kExitRunFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInterrupted = 130;

// rollout train RECIPE [key=value ...] [--dry-run]
int RunTrainCommand(const std::vector<std::string>& args);
// rollout plan RECIPE [key=value ...]
int RunPlanCommand(const std::vector<std::string>& args);
// rollout ckpt ls DIR | rollout ckpt verify PATH
int RunCkptCommand(const std::vector<std::string>& args);

}  // namespace rollout::controller
