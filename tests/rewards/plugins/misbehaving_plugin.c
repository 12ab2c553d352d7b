/* A plug-in that misbehaves on request, for the reward runners' isolation tests. The
 * response says what to do — or, in training, a ground truth "do:<what>" — "segfault",
 * "abort", "loop" (forever), "allocate" (without bound), "sleep <ms>"; anything else
 * scores 1 when the response contains the ground truth. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rewards/plugin_api.h"

int rollout_reward_abi_version(void) { return ROLLOUT_REWARD_ABI_VERSION; }
const char* rollout_reward_name(void) { return "misbehaving"; }

static void sleep_ms(long ms) {
  struct timespec duration = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&duration, &duration) != 0) {
  }
}

int rollout_reward_score(const RolloutRewardInput* input, double* score,
                         RolloutRewardAddExtra add_extra, void* extra_context, char* error,
                         size_t error_size) {
  (void)add_extra, (void)extra_context, (void)error, (void)error_size;
  const char* what =
      strncmp(input->ground_truth, "do:", 3) == 0 ? input->ground_truth + 3 : input->response;
  if (strcmp(what, "segfault") == 0) raise(SIGSEGV);
  if (strcmp(what, "abort") == 0) abort();
  if (strcmp(what, "loop") == 0) {
    for (volatile unsigned long spins = 0;; ++spins) {
    }
  }
  if (strcmp(what, "allocate") == 0) {
    for (;;) {
      char* block = malloc(1 << 20);
      memset(block, 1, 1 << 20); /* a NULL block (memory limit) segfaults here */
    }
  }
  if (strncmp(what, "sleep ", 6) == 0) sleep_ms(atol(what + 6));
  *score = strstr(what, input->ground_truth) != NULL ? 1.0 : 0.0;
  return 0;
}
