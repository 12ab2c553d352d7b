// Token ids and chat prompts in JSON, as the JSON-lines subcommands (`rollout tokenize`,
// `rollout generate`) take them and as the controller sends chat prompts to workers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "models/chat_template.h"

namespace rollout::models {

// {"ids": [...]} or a bare list of non-negative int32 ids; InvalidArgument naming the
// offending element otherwise.
absl::StatusOr<std::vector<int32_t>> ParseTokenIds(const nlohmann::json& value);

// A conversation and the tools it offers the model (ChatTemplate::Render's arguments).
struct ChatPrompt {
  std::vector<ChatMessage> messages;
  std::vector<nlohmann::ordered_json> tools;  // JSON schemas, keys in the data's order
  // What the row brings for its tools' calls and its simulated user in a multi-turn
  // rollout (verl's extra_info.tools_kwargs and interaction_kwargs, tools/tool.h,
  // tools/interaction.h); carried, not read, here. Empty objects when it has none.
  nlohmann::ordered_json tools_kwargs = nlohmann::ordered_json::object();
  nlohmann::ordered_json interaction_kwargs = nlohmann::ordered_json::object();
  // A multi-turn rollout's row of verl's single_turn_agent: one reply, no tool or user
  // turns (workers/multi_turn_rollout.h).
  bool single_turn = false;
};

// {"messages": [...], "tools": [...], "tools_kwargs": {...}, "interaction_kwargs": {...},
// "single_turn": true} (all but "messages" optional) or the bare list of messages, in
// common/chat_json.h's shapes; InvalidArgument naming the message, the tools,
// tools_kwargs or interaction_kwargs (when not an object) or single_turn (when not a
// boolean) otherwise.
absl::StatusOr<ChatPrompt> ParseChatPrompt(const nlohmann::ordered_json& value);
// The same of JSON text; InvalidArgument for text that is not JSON.
absl::StatusOr<ChatPrompt> ParseChatPromptText(absl::string_view text);

}  // namespace rollout::models
