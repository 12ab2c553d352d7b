/* The C ABI of reward plug-ins: a shared library that exports the three functions
 * below, loaded with `reward.plugin: path/libmy_reward.so` (or `rollout reward
 * --plugin`). C, so a plug-in can be built with any compiler or language that makes a
 * C shared library; it never links against rollout itself.
 *
 *   #include "rewards/plugin_api.h"
 *   int rollout_reward_abi_version(void) { return ROLLOUT_REWARD_ABI_VERSION; }
 *   const char* rollout_reward_name(void) { return "my_reward"; }
 *   int rollout_reward_score(const RolloutRewardInput* in, double* score,
 *                            RolloutRewardAddExtra add_extra, void* extra_context,
 *                            char* error, size_t error_size) {
 *     *score = strstr(in->response, in->ground_truth) ? 1.0 : 0.0;
 *     return 0;
 *   }
 *
 * rollout_reward_score is called from several threads at once: it must be thread-safe.
 * The strings live for the duration of the call only. */
#ifndef ROLLOUT_REWARDS_PLUGIN_API_H_
#define ROLLOUT_REWARDS_PLUGIN_API_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a declaration below changes incompatibly. */
#define ROLLOUT_REWARD_ABI_VERSION 1

/* One sample; every field is a NUL-terminated UTF-8 string, empty when absent. */
typedef struct {
  const char* data_source;
  const char* prompt;
  const char* response;
  const char* ground_truth;
  const char* extra_info; /* a JSON object as text */
} RolloutRewardInput;

/* Reports a named extra value (a metric such as "acc") for the sample being scored. */
typedef void (*RolloutRewardAddExtra)(void* extra_context, const char* name, double value);

/* The ABI version the plug-in was built for: return ROLLOUT_REWARD_ABI_VERSION. */
int rollout_reward_abi_version(void);
/* The reward's name, a static string. */
const char* rollout_reward_name(void);
/* Scores one sample into *score. Returns 0 on success; non-zero means the sample could
 * not be scored, with a NUL-terminated message written into error[0, error_size). */
int rollout_reward_score(const RolloutRewardInput* input, double* score,
                         RolloutRewardAddExtra add_extra, void* extra_context, char* error,
                         size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* ROLLOUT_REWARDS_PLUGIN_API_H_ */
