/* A plug-in that reports an error for every sample. */
#include <stdio.h>

#include "rewards/plugin_api.h"

int rollout_reward_abi_version(void) { return ROLLOUT_REWARD_ABI_VERSION; }
const char* rollout_reward_name(void) { return "failing"; }
int rollout_reward_score(const RolloutRewardInput* input, double* score,
                         RolloutRewardAddExtra add_extra, void* extra_context, char* error,
                         size_t error_size) {
  (void)add_extra, (void)extra_context, (void)score;
  snprintf(error, error_size, "cannot parse ground truth '%s'", input->ground_truth);
  return 3;
}
