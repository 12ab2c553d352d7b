// The JSON shape of chat messages and tool schemas, as datasets hold them (verl's and
// TRL's conversational rows, OpenAI's chat format) — checked once, by the controller as
// it loads rows and by the workers as they render them, so both accept the same rows.
//
// A message is an object with a string "role" (system, user, assistant or tool) and a
// string "content". An assistant message may make tool calls, "tool_calls": a non-empty
// list of {"type": "function", "function": {"name": ..., "arguments": ...}} or
// {"name": ..., "arguments": ...}, its arguments an object or that object's JSON text
// as a string; such a message's content may then be null or absent. Other keys (the
// training marks of common/chat_training_marks.h, "tool_call_id", ...) are left to
// their readers.
//
// Tools (transformers' apply_chat_template(tools=...), verl's data.multiturn.tools_key,
// TRL's "tools" column) are a list of JSON schemas (objects), or a string holding that
// list's JSON text, as Parquet datasets often store them; null or an empty list is none.
//
// Values are nlohmann::ordered_json so that keys keep the order the file gives them:
// templates write schemas and arguments in that order (models/python_json.h).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace rollout {

// InvalidArgument saying what is wrong with `message` ("has role 'x'; ...", "tool call
// 0 has no string \"name\""), without its location.
absl::Status CheckChatMessage(const nlohmann::ordered_json& message);

// The calls of an assistant message that CheckChatMessage accepted, each as
// {"name": ..., "arguments": ...} ("function" unwrapped); empty when it makes none.
std::vector<nlohmann::ordered_json> ToolCalls(const nlohmann::ordered_json& message);

// The schemas `tools` holds; InvalidArgument naming what is not a list of objects.
absl::StatusOr<std::vector<nlohmann::ordered_json>> ToolSchemas(const nlohmann::ordered_json& tools);

}  // namespace rollout
