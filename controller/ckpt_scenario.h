// A checkpoint regression scenario: a sequence of `rollout train` runs on one
// recipe (some crashed at a named crash point or killed after a delay) and the
// checkpoint state expected after them. Read from YAML by LoadScenario(); run by
// RunScenario() (controller/ckpt_scenario_runner.h). The format:
//
//   recipe: ../../recipes/grpo_arith.yaml   # relative to the scenario file
//   overrides: [trainer.device=cpu, ...]    # key=value for every run
//   workdir: /tmp/x                         # optional; a fresh temp dir otherwise
//   runs:
//     - overrides: [trainer.total_training_steps=2]
//     - overrides: [trainer.total_training_steps=4]
//       crash_at: ckpt.save.after_manifest  # or kill_after_s: 5
//       expect_exit: crash                  # ok|crash|killed|fail
//       expect: {tracker: 2}                # checked right after this run
//     - overrides: [trainer.total_training_steps=6]
//       corrupt: {file: global_step_4/actor/model.safetensors, offset: 100, bit: 3}
//       expect_exit: fail
//       expect_error_contains: "checksum mismatch"
//   expect:                                 # checked after the last run
//     resumed_from_step: 2
//     files_exist: [global_step_4/actor/model.safetensors]
//
// "{scenario_dir}" in recipe, workdir and overrides is replaced by the scenario
// file's directory, so a scenario can name fixtures next to it. expect_exit defaults
// to crash with crash_at, killed with kill_after_s, ok otherwise. `corrupt` (one
// flip or a list) flips bit `bit` (0-7, default 0) of byte `offset` of a file under
// the checkpoint root before the run starts; flipping the same bit again undoes it.
// `expect_error_contains` checks that the run's output (stdout and stderr) holds the
// text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::controller {

// How a run is expected to end: exit 0, the crash point's exit code, death by a
// signal (kill_after_s), or any other non-zero exit.
enum class RunOutcome { kOk, kCrash, kKilled, kFail };

// "ok", "crash", "killed", "fail".
absl::string_view RunOutcomeName(RunOutcome outcome);

// Checks of the checkpoint root (trainer.default_local_dir) and of one run's log.
// Unset fields are not checked. Paths are relative to the checkpoint root.
struct ScenarioExpectations {
  std::optional<int64_t> resumed_from_step;  // from the run's "resuming from" line
  std::vector<std::string> files_exist;
  std::vector<std::string> files_absent;
  std::optional<int64_t> tracker;           // latest_checkpointed_iteration.txt
  std::optional<int64_t> checkpoints_kept;  // complete global_step_N directories
  // The newest complete checkpoint's actor/model.safetensors equals, byte for byte,
  // the same step's of a fresh run with the run's keys straight through.
  bool same_params_as_uninterrupted = false;
  std::string where;  // "FILE:LINE" of the expect block, for messages

  bool empty() const;
};

// One bit of a checkpoint file to flip, to simulate silent corruption on disk.
struct BitFlip {
  std::string file;    // relative to the checkpoint root
  int64_t offset = 0;  // the byte, from the start of the file
  int bit = 0;         // 0 (least significant) to 7
};

struct ScenarioRun {
  std::vector<BitFlip> corrupt;        // applied in order before the run
  std::vector<std::string> overrides;  // after the scenario's own
  std::string crash_at;                // "" or a name from KnownCrashPoints()
  std::optional<double> kill_after_s;  // SIGKILL to the controller's process group
  RunOutcome expect_exit = RunOutcome::kOk;
  std::string expect_error_contains;  // "" or text the run's output must hold
  ScenarioExpectations expect;
};

struct Scenario {
  std::string path;     // the scenario file, as given
  std::string recipe;   // resolved against the scenario file's directory
  std::vector<std::string> overrides;
  std::string workdir;  // "" means a fresh temporary directory
  std::vector<ScenarioRun> runs;
  ScenarioExpectations expect;  // after the last run
};

// Reads and validates `path`. InvalidArgument "FILE:LINE: what" for YAML errors,
// unknown or missing keys, wrong types, an unknown crash point, crash_at together
// with kill_after_s, a corrupt entry without file or offset, a negative offset or a
// bit outside 0-7; NotFound when the file cannot be read.
absl::StatusOr<Scenario> LoadScenario(const std::string& path);

}  // namespace rollout::controller
