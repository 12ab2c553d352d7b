// How chat templates write tools, tool calls and tool results (ChatTemplate's formats
// call these; chat_template.h says which format writes which): Qwen's (Qwen2.5, Qwen3)
// and Llama 3.1+'s, schemas and arguments as transformers' tojson writes them
// (models/python_json.h), and the template lines that show a template writes them so.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/string_view.h"
#include "models/chat_template.h"

namespace rollout::models {

// Whether a template's text holds Qwen2.5's tool lines (Qwen3's are the same).
bool HasQwenToolLines(absl::string_view template_text);
// Whether a Llama 3.1+ template's text holds its tool lines (tools in the first user
// message, the default).
bool HasLlamaToolLines(absl::string_view template_text);

// The system text Qwen's templates write for `tools` after the system message's own,
// "# Tools ..." through the system turn's <|im_end|>\n.
std::string QwenToolsHeader(const std::vector<nlohmann::ordered_json>& tools);
// <tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>; arguments given as a JSON
// string are written as is when `string_arguments_as_is` (Qwen3), else quoted (Qwen2.5).
std::string QwenToolCall(const ChatToolCall& call, bool string_arguments_as_is);
// Message i, a tool result: a run of them shares one user turn.
void AppendQwenToolResult(const std::vector<ChatMessage>& messages, size_t i, std::string* out);

// The user turn Llama's template writes for `tools` with the first user message's
// (trimmed) content.
std::string LlamaToolsTurn(const std::vector<nlohmann::ordered_json>& tools, absl::string_view user_content);
// A message's one tool call, the whole assistant turn.
std::string LlamaToolCallTurn(const ChatToolCall& call);
// A tool result as an ipython turn, its text JSON-quoted.
std::string LlamaToolResultTurn(const ChatMessage& message);

}  // namespace rollout::models
