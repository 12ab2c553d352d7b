/* An example reward plug-in (see rewards/plugin_api.h): 1 when the response contains
 * the ground truth, else 0, and the response length as an extra metric.
 * Built with the project as librollout_example_reward.so:
 *   rollout reward --plugin build/rewards/librollout_example_reward.so < samples.jsonl */
#include <string.h>

#include "rewards/plugin_api.h"

int rollout_reward_abi_version(void) { return ROLLOUT_REWARD_ABI_VERSION; }

const char* rollout_reward_name(void) { return "contains_answer"; }

int rollout_reward_score(const RolloutRewardInput* input, double* score,
                         RolloutRewardAddExtra add_extra, void* extra_context, char* error,
                         size_t error_size) {
  (void)error;
  (void)error_size;
  *score = input->ground_truth[0] != '\0' && strstr(input->response, input->ground_truth) ? 1.0 : 0.0;
  add_extra(extra_context, "response_chars", (double)strlen(input->response));
  return 0;
}
