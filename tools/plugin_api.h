/* The C ABI of tool plug-ins: a shared library that runs a tool the model may call in a
 * multi-turn rollout (rollout.multi_turn). A tool config names it with class_name
 * plugin and its path under config.library (relative to the config file); the other
 * keys of config reach rollout_tool_create as a JSON object:
 *
 *   tools:
 *     - class_name: plugin
 *       config: {library: libweather_tool.so, units: metric}
 *       tool_schema: {type: function, function: {name: weather, parameters: {...}}}
 *
 * C, so a plug-in can be built with any compiler or language that makes a C shared
 * library; it never links against rollout itself.
 *
 *   #include "tools/plugin_api.h"
 *   int rollout_tool_abi_version(void) { return ROLLOUT_TOOL_ABI_VERSION; }
 *   void* rollout_tool_create(const char* config, char* error, size_t error_size) { ... }
 *   int rollout_tool_execute(void* tool, const char* arguments, const char* create_kwargs,
 *                            RolloutToolWrite write, void* write_context, double* reward) {
 *     write(write_context, "22", 2);
 *     return 0;
 *   }
 *   void rollout_tool_destroy(void* tool) { ... }
 *
 * Each process that loads the tool config creates the tool once (the controller, to
 * check it, and each rollout worker) and destroys it before unloading the library. A
 * tool's calls come one at a time. The strings live for the duration of the call only. */
#ifndef ROLLOUT_TOOLS_PLUGIN_API_H_
#define ROLLOUT_TOOLS_PLUGIN_API_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a declaration below changes incompatibly. */
#define ROLLOUT_TOOL_ABI_VERSION 2

/* Appends `size` bytes of `text` (UTF-8) to the call's result. */
typedef void (*RolloutToolWrite)(void* write_context, const char* text, size_t size);

/* The ABI version the plug-in was built for: return ROLLOUT_TOOL_ABI_VERSION. */
int rollout_tool_abi_version(void);
/* A tool set up with `config` (a JSON object as text), passed back to the calls below
 * (a tool without state may return any non-NULL pointer). NULL when it cannot be, with a NUL-terminated message written into error[0, error_size). */
void* rollout_tool_create(const char* config, char* error, size_t error_size);
/* Runs one call with `arguments` (a JSON object as text) in a trajectory whose
 * create_kwargs for this tool are `create_kwargs` (a JSON object as text, "{}" when its
 * row has none: verl's extra_info.tools_kwargs.<tool name>.create_kwargs), writing its
 * result through `write` and, optionally, the call's reward (verl's tool_reward, which
 * the trajectory's reward function finds in extra_info.tool_rewards) into *reward, which
 * holds 0 until then. Returns 0 on success; non-zero means the call failed, and what was
 * written is the error the model is shown (its reward is 0). */
int rollout_tool_execute(void* tool, const char* arguments, const char* create_kwargs, RolloutToolWrite write,
                         void* write_context, double* reward);
/* Releases what rollout_tool_create set up. */
void rollout_tool_destroy(void* tool);

#ifdef __cplusplus
}
#endif

#endif /* ROLLOUT_TOOLS_PLUGIN_API_H_ */
