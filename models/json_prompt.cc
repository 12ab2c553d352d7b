#include "models/json_prompt.h"

#include <limits>
#include <string>

#include "absl/strings/str_cat.h"

namespace rollout::models {

using nlohmann::json;

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

absl::StatusOr<std::vector<ChatMessage>> ParseChatMessages(const json& value) {
  const json& messages =
      value.is_object() && value.contains("messages") ? value.at("messages") : value;
  if (!messages.is_array()) {
    return absl::InvalidArgumentError("expected {\"messages\": [...]} or a JSON list of messages");
  }
  std::vector<ChatMessage> out;
  for (size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    if (!m.is_object() || !m.contains("role") || !m.at("role").is_string() ||
        !m.contains("content") || !m.at("content").is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat("messages[", i, "] is not {\"role\": string, \"content\": string}"));
    }
    out.push_back({m.at("role").get<std::string>(), m.at("content").get<std::string>()});
  }
  return out;
}

}  // namespace rollout::models
