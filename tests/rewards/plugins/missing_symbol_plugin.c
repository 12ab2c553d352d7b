/* A plug-in that forgot rollout_reward_score: loading it must name the symbol. */
#include "rewards/plugin_api.h"

int rollout_reward_abi_version(void) { return ROLLOUT_REWARD_ABI_VERSION; }
const char* rollout_reward_name(void) { return "missing_symbol"; }
