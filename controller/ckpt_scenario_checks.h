// Evaluates a scenario's expectations (controller/ckpt_scenario.h) against the
// checkpoint root and the log of the run they follow. Read-only, except that
// same_params_as_uninterrupted asks the caller for a reference run.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "controller/ckpt_scenario.h"

namespace rollout::controller {

// One expectation's verdict, printed as
//   PASS  tracker: expected 4, observed 4
struct CheckResult {
  std::string name;  // "tracker", "files_exist global_step_2/actor"
  bool passed = false;
  std::string expected;
  std::string observed;
};

// What the checks look at after a run.
struct RunEvidence {
  std::string root;      // the run's trainer.default_local_dir, absolute
  std::string log_path;  // the run's stdout and stderr
  // Runs the same keys straight through from scratch and returns that run's
  // checkpoint root; called at most once, only for same_params_as_uninterrupted.
  std::function<absl::StatusOr<std::string>()> reference_root;
};

std::vector<CheckResult> CheckExpectations(const ScenarioExpectations& expect,
                                           const RunEvidence& evidence);

// expect_error_contains: a line of the run's log (`log_path`) holds `text`. Observed:
// that line, or the log's last line when none does.
CheckResult CheckOutputContains(const std::string& text, const std::string& log_path,
                                absl::string_view name);

// The step named by the last "resuming from .../global_step_N" line of `log`, or
// nullopt when the log has none (a fresh start, or a run that died earlier).
std::optional<int64_t> ResumedFromStep(absl::string_view log);

}  // namespace rollout::controller
