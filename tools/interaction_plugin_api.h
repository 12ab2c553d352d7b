/* The C ABI of simulated-user plug-ins: a shared library that answers the model's
 * replies in a multi-turn rollout, as verl's interactions do
 * (rollout.multi_turn.interaction_config_path, tools/interaction.h). An interaction
 * config names it with class_name plugin and its path under config.library (relative to
 * the config file); the other keys of config reach rollout_interaction_create as a JSON
 * object:
 *
 *   interaction:
 *     - name: tutor
 *       class_name: plugin
 *       config: {library: libtutor.so, patience: 3}
 *
 * Rows name it in extra_info.interaction_kwargs: {"name": "tutor", ...}.
 *
 * C, so a plug-in can be built with any compiler or language that makes a C shared
 * library; it never links against rollout itself.
 *
 *   #include "tools/interaction_plugin_api.h"
 *   int rollout_interaction_abi_version(void) { return ROLLOUT_INTERACTION_ABI_VERSION; }
 *   void* rollout_interaction_create(const char* config, char* error, size_t error_size) { ... }
 *   int rollout_interaction_check_kwargs(void* interaction, const char* interaction_kwargs,
 *                                        char* error, size_t error_size) { return 0; }
 *   int rollout_interaction_respond(void* interaction, const char* messages,
 *                                   const char* interaction_kwargs, RolloutInteractionWrite write,
 *                                   void* write_context, int* ends, double* score) {
 *     write(write_context, "Try again.", 10);
 *     return 0;
 *   }
 *   void rollout_interaction_destroy(void* interaction) { ... }
 *
 * Each process that loads the interaction config creates the interaction once (the
 * controller, which checks rows' interaction_kwargs as the data loads, and each rollout
 * worker) and destroys it before unloading the library. Its calls come one at a time.
 * The strings live for the duration of the call only. */
#ifndef ROLLOUT_TOOLS_INTERACTION_PLUGIN_API_H_
#define ROLLOUT_TOOLS_INTERACTION_PLUGIN_API_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a declaration below changes incompatibly. */
#define ROLLOUT_INTERACTION_ABI_VERSION 1

/* Appends `size` bytes of `text` (UTF-8) to the user's message. */
typedef void (*RolloutInteractionWrite)(void* write_context, const char* text, size_t size);

/* The ABI version the plug-in was built for: return ROLLOUT_INTERACTION_ABI_VERSION. */
int rollout_interaction_abi_version(void);
/* An interaction set up with `config` (a JSON object as text), passed back to the calls
 * below (one without state may return any non-NULL pointer). NULL when it cannot be,
 * with a NUL-terminated message written into error[0, error_size). */
void* rollout_interaction_create(const char* config, char* error, size_t error_size);
/* Whether rows with `interaction_kwargs` (a JSON object as text, its "name" this
 * interaction's) can be answered: 0 if so; otherwise non-zero, with a NUL-terminated
 * message saying what is missing written into error[0, error_size). Called for each row
 * as the data loads, so that a row it cannot answer is refused there, and again before
 * each answer. */
int rollout_interaction_check_kwargs(void* interaction, const char* interaction_kwargs, char* error,
                                     size_t error_size);
/* The user's answer to the conversation so far, `messages` (a JSON list in OpenAI's chat
 * format, as verl's agent loop passes it to generate_response: the row's prompt
 * messages, then each reply of the model as {"role": "assistant", "content": its text
 * without special tokens}, tool results as {"role": "tool", ...}, the user's earlier
 * answers as {"role": "user", ...}; the last message is the reply to answer), in a row
 * with `interaction_kwargs`. Writes the user's message through `write`, sets *ends to
 * non-zero when the conversation ends with it (verl's should_terminate_sequence; 0 until
 * then) and *score to the turn's score (verl's turn score, which the reward function
 * finds in extra_info.turn_scores; 0 until then). Returns 0 on success; non-zero fails
 * the rollout, with what was written as its error. */
int rollout_interaction_respond(void* interaction, const char* messages, const char* interaction_kwargs,
                                RolloutInteractionWrite write, void* write_context, int* ends, double* score);
/* Releases what rollout_interaction_create set up. */
void rollout_interaction_destroy(void* interaction);

#ifdef __cplusplus
}
#endif

#endif /* ROLLOUT_TOOLS_INTERACTION_PLUGIN_API_H_ */
