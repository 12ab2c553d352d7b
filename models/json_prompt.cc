#include "models/json_prompt.h"

#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/chat_json.h"

namespace rollout::models {

using nlohmann::json;
using nlohmann::ordered_json;

absl::StatusOr<std::vector<int32_t>> ParseTokenIds(const json& value) {
  const json& ids = value.is_object() && value.contains("ids") ? value.at("ids") : value;
  if (!ids.is_array())
    return absl::InvalidArgumentError("expected {\"ids\": [...]} or a JSON list of ids");
  std::vector<int32_t> out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!ids[i].is_number_integer() || ids[i].get<int64_t>() < 0 ||
        ids[i].get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("ids[", i, "] = ", ids[i].dump(), " is not a token id"));
    }
    out.push_back(ids[i].get<int32_t>());
  }
  return out;
}

absl::StatusOr<ChatPrompt> ParseChatPrompt(const ordered_json& value) {
  const bool wrapped = value.is_object() && value.contains("messages");
  const ordered_json& messages = wrapped ? value.at("messages") : value;
  if (!messages.is_array()) {
    return absl::InvalidArgumentError("expected {\"messages\": [...]} or a JSON list of messages");
  }
  ChatPrompt prompt;
  for (size_t i = 0; i < messages.size(); ++i) {
    const ordered_json& m = messages[i];
    if (absl::Status status = CheckChatMessage(m); !status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("messages[", i, "] ", status.message()));
    }
    ChatMessage message{m.at("role").get<std::string>(), ""};
    if (const auto content = m.find("content"); content != m.end() && content->is_string()) {
      message.content = content->get<std::string>();
    }
    for (const ordered_json& call : ToolCalls(m)) {
      message.tool_calls.push_back({call.at("name").get<std::string>(), call.at("arguments")});
    }
    prompt.messages.push_back(std::move(message));
  }
  if (wrapped && value.contains("tools")) {
    absl::StatusOr<std::vector<ordered_json>> tools = ToolSchemas(value.at("tools"));
    if (!tools.ok()) return absl::InvalidArgumentError(absl::StrCat("\"tools\" ", tools.status().message()));
    prompt.tools = *std::move(tools);
  }
  for (const auto& [key, field] : {std::pair<const char*, ordered_json*>{"tools_kwargs", &prompt.tools_kwargs},
                                    {"interaction_kwargs", &prompt.interaction_kwargs}}) {
    if (!wrapped || !value.contains(key)) continue;
    if (!value.at(key).is_object()) return absl::InvalidArgumentError(absl::StrCat("\"", key, "\" is not an object"));
    *field = value.at(key);
  }
  if (wrapped && value.contains("single_turn")) {
    if (!value.at("single_turn").is_boolean()) return absl::InvalidArgumentError("\"single_turn\" is not a boolean");
    prompt.single_turn = value.at("single_turn").get<bool>();
  }
  return prompt;
}

absl::StatusOr<ChatPrompt> ParseChatPromptText(absl::string_view text) {
  const ordered_json value = ordered_json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return absl::InvalidArgumentError("the chat prompt is not valid JSON");
  return ParseChatPrompt(value);
}

}  // namespace rollout::models
