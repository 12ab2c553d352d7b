#include "models/chat_tool_formats.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "models/python_json.h"

namespace rollout::models {
namespace {

using nlohmann::ordered_json;

// Qwen2.5's tool lines as the template text spells them.
constexpr absl::string_view kQwenToolLines[] = {
    "You may call one or more functions to assist with the user query.\\n\\nYou are provided with "
    "function signatures within <tools></tools> XML tags:\\n<tools>\" }}",
    "{{- tool | tojson }}",
    "{{- \"\\n</tools>\\n\\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\\"name\\\": <function-name>, "
    "\\\"arguments\\\": <args-json-object>}\\n</tool_call><|im_end|>\\n\" }}",
    "{{- '\\n<tool_call>\\n{\"name\": \"' }}",
    "{{- tool_call.arguments | tojson }}",
    "{{- '\\n<tool_response>\\n' }}",
};

// Llama 3.1+'s (3.1, 3.2, 3.3 Instruct).
constexpr absl::string_view kLlamaToolLines[] = {
    "{%- set tools_in_user_message = true %}",
    "{{- \"Environment: ipython\\n\" }}",
    "{{- \"Given the following functions, please respond with a JSON for a function call \" }}",
    "{{- \"with its proper arguments that best answers the given prompt.\\n\\n\" }}",
    "{{- 'Respond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its "
    "value}.' }}",
    "{{- \"Do not use variables.\\n\\n\" }}",
    "{{- t | tojson(indent=4) }}",
    "{{- '{\"name\": \"' + tool_call.name + '\", ' }}",
    "{{- '\"parameters\": ' }}",
    "{{- \"<|start_header_id|>ipython<|end_header_id|>\\n\\n\" }}",
    "{%- if message.content is mapping or message.content is iterable %}",
};

bool HasAll(absl::string_view text, absl::Span<const absl::string_view> lines) {
  for (absl::string_view line : lines) {
    if (!absl::StrContains(text, line)) return false;
  }
  return true;
}

}  // namespace

bool HasQwenToolLines(absl::string_view template_text) { return HasAll(template_text, kQwenToolLines); }

bool HasLlamaToolLines(absl::string_view template_text) { return HasAll(template_text, kLlamaToolLines); }

std::string QwenToolsHeader(const std::vector<ordered_json>& tools) {
  std::string out =
      "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with "
      "function signatures within <tools></tools> XML tags:\n<tools>";
  for (const ordered_json& tool : tools) absl::StrAppend(&out, "\n", PythonJsonDumps(tool));
  absl::StrAppend(&out,
                  "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
                  "within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, "
                  "\"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n");
  return out;
}

std::string QwenToolCall(const ChatToolCall& call, bool string_arguments_as_is) {
  const std::string arguments = string_arguments_as_is && call.arguments.is_string()
                                    ? call.arguments.get<std::string>()
                                    : PythonJsonDumps(call.arguments);
  return absl::StrCat("<tool_call>\n{\"name\": \"", call.name, "\", \"arguments\": ", arguments, "}\n</tool_call>");
}

void AppendQwenToolResult(const std::vector<ChatMessage>& messages, size_t i, std::string* out) {
  if (i == 0 || messages[i - 1].role != "tool") *out += "<|im_start|>user";
  absl::StrAppend(out, "\n<tool_response>\n", messages[i].content, "\n</tool_response>");
  if (i + 1 == messages.size() || messages[i + 1].role != "tool") *out += "<|im_end|>\n";
}

std::string LlamaToolsTurn(const std::vector<ordered_json>& tools, absl::string_view user_content) {
  std::string out =
      "<|start_header_id|>user<|end_header_id|>\n\nGiven the following functions, please respond with a JSON for "
      "a function call with its proper arguments that best answers the given prompt.\n\nRespond in the format "
      "{\"name\": function name, \"parameters\": dictionary of argument name and its value}.Do not use "
      "variables.\n\n";
  for (const ordered_json& tool : tools) absl::StrAppend(&out, PythonJsonDumps(tool, /*indent=*/4), "\n\n");
  absl::StrAppend(&out, user_content, "<|eot_id|>");
  return out;
}

std::string LlamaToolCallTurn(const ChatToolCall& call) {
  return absl::StrCat("<|start_header_id|>assistant<|end_header_id|>\n\n{\"name\": \"", call.name,
                      "\", \"parameters\": ", PythonJsonDumps(call.arguments), "}<|eot_id|>");
}

std::string LlamaToolResultTurn(const ChatMessage& message) {
  return absl::StrCat("<|start_header_id|>ipython<|end_header_id|>\n\n", PythonJsonDumps(ordered_json(message.content)),
                      "<|eot_id|>");
}

}  // namespace rollout::models
