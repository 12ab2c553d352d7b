/* A plug-in built for another reward ABI version: loading it must fail clearly. */
#include "rewards/plugin_api.h"

int rollout_reward_abi_version(void) { return ROLLOUT_REWARD_ABI_VERSION + 1; }
const char* rollout_reward_name(void) { return "wrong_abi"; }
int rollout_reward_score(const RolloutRewardInput* input, double* score,
                         RolloutRewardAddExtra add_extra, void* extra_context, char* error,
                         size_t error_size) {
  (void)input, (void)add_extra, (void)extra_context, (void)error, (void)error_size;
  *score = 1.0;
  return 0;
}
