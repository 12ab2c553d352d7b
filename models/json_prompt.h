// Token ids and chat messages in JSON input lines, as the JSON-lines subcommands
// (`rollout tokenize`, `rollout generate`) accept them.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "models/chat_template.h"

namespace rollout::models {

// {"ids": [...]} or a bare list of non-negative int32 ids; InvalidArgument naming the
// offending element otherwise.
absl::StatusOr<std::vector<int32_t>> ParseTokenIds(const nlohmann::json& value);

// {"messages": [{"role": ..., "content": ...}, ...]} or the bare list.
absl::StatusOr<std::vector<ChatMessage>> ParseChatMessages(const nlohmann::json& value);

}  // namespace rollout::models
