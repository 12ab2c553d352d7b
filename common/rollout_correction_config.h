// algorithm.rollout_correction's defaulted bounds, which the controller (the correction
// of old log-probs) and the actor (use_policy_gradient) both apply.
#pragma once

#include "proto/recipe.pb.h"

namespace rollout::config {

struct RejectionBounds {
  double lower;
  double upper;
};

// rollout_rs's bounds: rollout_rs_threshold or else rollout_is_threshold, and
// rollout_rs_threshold_lower or else 1 / upper.
RejectionBounds RolloutRejectionBounds(const RolloutCorrectionConfig& correction);

}  // namespace rollout::config
