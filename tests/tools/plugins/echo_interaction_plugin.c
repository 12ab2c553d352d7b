/* An interaction plug-in for the loader's tests (tools/interaction_plugin_api.h): its
 * answer is its config, the conversation and the row's interaction_kwargs as it got
 * them, with score 0.25; it ends the conversation when the last message says "bye".
 * Rows whose kwargs lack a "topic" are refused, kwargs with a "fail" key make the answer
 * fail, and a config with a "refuse" key makes creation fail. */
#include <stdlib.h>
#include <string.h>

#include "tools/interaction_plugin_api.h"

int rollout_interaction_abi_version(void) { return ROLLOUT_INTERACTION_ABI_VERSION; }

void* rollout_interaction_create(const char* config, char* error, size_t error_size) {
  if (strstr(config, "\"refuse\"") != NULL) {
    strncpy(error, "told to refuse", error_size - 1);
    return NULL;
  }
  char* copy = malloc(strlen(config) + 1);
  if (copy != NULL) strcpy(copy, config);
  return copy;
}

int rollout_interaction_check_kwargs(void* interaction, const char* interaction_kwargs, char* error,
                                     size_t error_size) {
  (void)interaction;
  if (strstr(interaction_kwargs, "\"topic\"") != NULL) return 0;
  strncpy(error, "needs a topic to talk about", error_size - 1);
  return 1;
}

int rollout_interaction_respond(void* interaction, const char* messages, const char* interaction_kwargs,
                                RolloutInteractionWrite write, void* write_context, int* ends, double* score) {
  if (strstr(interaction_kwargs, "\"fail\"") != NULL) {
    write(write_context, "lost my voice", strlen("lost my voice"));
    return 3;
  }
  const char* config = interaction;
  write(write_context, "config=", strlen("config="));
  write(write_context, config, strlen(config));
  write(write_context, " messages=", strlen(" messages="));
  write(write_context, messages, strlen(messages));
  write(write_context, " kwargs=", strlen(" kwargs="));
  write(write_context, interaction_kwargs, strlen(interaction_kwargs));
  const char* last = strrchr(messages, '{');
  *ends = last != NULL && strstr(last, "bye") != NULL;
  *score = 0.25;
  return 0;
}

void rollout_interaction_destroy(void* interaction) { free(interaction); }
