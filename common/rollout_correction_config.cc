#include "common/rollout_correction_config.h"

namespace rollout::config {

RejectionBounds RolloutRejectionBounds(const RolloutCorrectionConfig& correction) {
  const double upper = correction.rollout_rs_threshold() > 0 ? correction.rollout_rs_threshold()
                                                             : correction.rollout_is_threshold();
  const double lower = correction.rollout_rs_threshold_lower() > 0 ? correction.rollout_rs_threshold_lower() : 1.0 / upper;
  return {lower, upper};
}

}  // namespace rollout::config
