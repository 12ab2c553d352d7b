// Entry points of the controller-side `rollout` subcommands. Each takes the
// arguments after its name, prints errors as one line, and returns the exit code:
// 0 success, 1 the run failed, 2 bad usage or recipe, 130 interrupted.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace rollout::controller {

constexpr int kExitOk = 0;
constexpr int kExitRunFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInterrupted = 130;

// rollout train RECIPE [key=value ...] [--dry-run]
int RunTrainCommand(const std::vector<std::string>& args);
// rollout eval RECIPE [key=value ...]: train with trainer.val_only=true
int RunEvalCommand(const std::vector<std::string>& args);
// rollout plan RECIPE [key=value ...]
int RunPlanCommand(const std::vector<std::string>& args);
// Writes `out_dir` from a verified actor checkpoint directory; `adapter_only`: the
// LoRA adapter alone. cli/main.cc passes workers/checkpoint_export.h's, which needs
// the model code that controller/ must not include (DESIGN.md §4).
using CheckpointExporter = std::function<absl::Status(
    const std::string& actor_dir, const std::string& out_dir, bool adapter_only)>;

// rollout ckpt ls DIR | verify PATH | export PATH --hf OUT [--adapter] | scenario FILE
int RunCkptCommand(const std::vector<std::string>& args, const CheckpointExporter& exporter);

}  // namespace rollout::controller
