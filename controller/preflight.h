// Pre-flight check of a started runtime, run before training (and all that
// `rollout train --dry-run` does after start-up): asks every worker who it is
// (diag.info) and has every pool compute token log-probs of a random batch on its
// devices, split data-parallel, comparing the result with the controller's own CPU
// result. Catches a broken device stack or a wrong device mapping before an hour
// of training is lost.
#pragma once

#include <ostream>

#include "absl/status/status.h"
#include "controller/runtime.h"

namespace rollout::controller {

// Writes one line per worker and one per pool to `out`. DataLoss when a pool's
// result differs from the reference beyond float tolerance.
absl::Status RunPreflight(ControllerRuntime& runtime, const Placement& placement,
                          std::ostream& out);

}  // namespace rollout::controller
