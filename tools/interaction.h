// Simulated users in multi-turn rollouts (verl's interactions,
// rollout.multi_turn.interaction_config_path): when a reply calls no tool, the row's
// interaction answers it as the next user message, says whether the conversation ends
// there, and scores the turn (verl's turn_scores, which the reward function finds in
// extra_info.turn_scores).
//
// verl's interaction config file, YAML or JSON:
//
//   interaction:
//     - name: gsm8k                # optional: the class name's last part, lowercased,
//                                  # without its "Interaction" suffix
//       class_name: verl.interactions.gsm8k_interaction.Gsm8kInteraction   # or gsm8k
//       config: {}
//
// Each row names its interaction, with what it needs, in extra_info.interaction_kwargs:
// {"name": "gsm8k", "ground_truth": "72", ...} (verl's key; "name" is required, as there).
//
// Built in: gsm8k (verl's Gsm8kInteraction): the last assistant message scored by verl's
// flexible gsm8k rule against interaction_kwargs.ground_truth (a string or an integer);
// 1.0 answers "Your response is correct!" and ends the conversation, anything else
// answers "Your response is incorrect! You need to reflect on your answer and try
// again." The turn's score is the reply's. Your own: class_name plugin, with
// config.library the path (relative to the config file) of a C shared library with the
// ABI of tools/interaction_plugin_api.h; the rest of config is its configuration.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/recipe.pb.h"

namespace rollout::tools {

// A simulated user's turn.
struct UserTurn {
  std::string content;     // the user message
  bool ends = false;       // the conversation ends with it (verl's should_terminate_sequence)
  double score = 0;        // verl's turn score
};

class Interaction {
 public:
  virtual ~Interaction() = default;
  // The user's answer to the conversation so far, `messages` (a list in OpenAI's chat
  // format, as verl's agent loop keeps it: the row's prompt messages, then each reply of
  // the model as an assistant message whose content is its text without special tokens,
  // tool results as tool messages, the user's earlier answers as user messages; the last
  // is the reply to answer), in a row with `interaction_kwargs`.
  virtual absl::StatusOr<UserTurn> Respond(const nlohmann::ordered_json& messages,
                                           const nlohmann::ordered_json& interaction_kwargs) const = 0;
  // Whether rows with these interaction_kwargs can be answered; InvalidArgument saying
  // what is missing otherwise.
  virtual absl::Status CheckKwargs(const nlohmann::ordered_json& interaction_kwargs) const;
};

// The interactions a recipe configures, by name.
class InteractionSet {
 public:
  // InvalidArgument when another has the name.
  absl::Status Add(const std::string& name, std::unique_ptr<Interaction> interaction);
  bool empty() const { return by_name_.empty(); }

  // Whether a row may have `interaction_kwargs`: an object whose string "name" names an
  // interaction of the set, which accepts them (Interaction::CheckKwargs).
  // InvalidArgument saying what is wrong otherwise.
  absl::Status CheckInteractionKwargs(const nlohmann::ordered_json& interaction_kwargs) const;

  // The answer to `messages` (Interaction::Respond) of the interaction
  // interaction_kwargs["name"] names, with them (which CheckInteractionKwargs accepted;
  // InvalidArgument otherwise).
  absl::StatusOr<UserTurn> Respond(const nlohmann::ordered_json& messages,
                                   const nlohmann::ordered_json& interaction_kwargs) const;

 private:
  std::map<std::string, std::unique_ptr<Interaction>> by_name_;
};

// InvalidArgument naming the file and the entry (by index) for a malformed file, an
// unknown class_name or two interactions of one name; NotFound when it cannot be read.
absl::StatusOr<InteractionSet> LoadInteractionConfig(const std::string& path);

// rollout.multi_turn's interactions: none unless it is enabled with an
// interaction_config_path, then that file's.
absl::StatusOr<InteractionSet> LoadMultiTurnInteractions(const config::MultiTurnConfig& multi_turn);

}  // namespace rollout::tools
