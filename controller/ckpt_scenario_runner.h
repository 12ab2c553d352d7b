// Runs a checkpoint scenario (controller/ckpt_scenario.h): each run as a
// `rollout train` child process (controller/ckpt_scenario_child.h) in the scenario's
// working directory, then its expectations (controller/ckpt_scenario_checks.h).
// Prints one PASS/FAIL line per run exit and per expectation, with what was seen:
//
//   run 2/3: train trainer.total_training_steps=4 (crash_at ckpt.save.after_manifest)
//   PASS  run 2 exit: expected crash, observed crash (exited with status 86)
//   PASS  tracker: expected 2, observed 2
//
// A run's `corrupt` flips are made just before it starts, one line each
// ("corrupt: flipped bit 3 of byte 100 of global_step_2/actor/model.safetensors"); its
// expect_error_contains is checked right after its exit. A run that ends other than
// expected, or whose flip cannot be made (a FAIL), stops the scenario (later runs
// would start from an unknown state); the tail of its log is printed.
#pragma once

#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "controller/ckpt_scenario.h"

namespace rollout::controller {

struct ScenarioOptions {
  std::string binary;  // the rollout executable the runs use
  // Where the fresh working directory of a scenario without `workdir` is made. It
  // is removed when every check passes and kept (and named) otherwise.
  std::string temp_root = "/tmp";
};

struct ScenarioReport {
  int passed = 0;
  int failed = 0;
};

// Errors only when the scenario cannot be run at all (no working directory, a
// recipe that does not load with a run's keys); failed checks are counted instead.
absl::StatusOr<ScenarioReport> RunScenario(const Scenario& scenario, const ScenarioOptions& options,
                                           std::ostream& out);

}  // namespace rollout::controller
