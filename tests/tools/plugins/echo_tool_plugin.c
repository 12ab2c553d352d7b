/* A tool plug-in for the loader's tests (tools/plugin_api.h): a call's result is the
 * tool's config, the call's arguments and its create_kwargs as it got them, its reward
 * 0.5; arguments with a "fail" key
 * make the call fail, a config with a "refuse" key makes creation fail. */
#include <stdlib.h>
#include <string.h>

#include "tools/plugin_api.h"

int rollout_tool_abi_version(void) { return ROLLOUT_TOOL_ABI_VERSION; }

void* rollout_tool_create(const char* config, char* error, size_t error_size) {
  if (strstr(config, "\"refuse\"") != NULL) {
    strncpy(error, "told to refuse", error_size - 1);
    return NULL;
  }
  char* copy = malloc(strlen(config) + 1);
  if (copy != NULL) strcpy(copy, config);
  return copy;
}

int rollout_tool_execute(void* tool, const char* arguments, const char* create_kwargs, RolloutToolWrite write,
                         void* write_context, double* reward) {
  if (strstr(arguments, "\"fail\"") != NULL) {
    *reward = 9.0; /* a failed call's reward is 0 whatever it wrote */
    write(write_context, "no such city", strlen("no such city"));
    return 2;
  }
  const char* config = tool;
  write(write_context, "config=", strlen("config="));
  write(write_context, config, strlen(config));
  write(write_context, " arguments=", strlen(" arguments="));
  write(write_context, arguments, strlen(arguments));
  write(write_context, " create_kwargs=", strlen(" create_kwargs="));
  write(write_context, create_kwargs, strlen(create_kwargs));
  *reward = 0.5;
  return 0;
}

void rollout_tool_destroy(void* tool) { free(tool); }
