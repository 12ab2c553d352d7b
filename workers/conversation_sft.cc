#include "workers/conversation_sft.h"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/chat_training_marks.h"
#include "common/check.h"
#include "common/status_macros.h"
#include "models/json_prompt.h"

namespace rollout::workers {
namespace {

// The number of leading tokens `a` and `b` share.
size_t SharedPrefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  return static_cast<size_t>(std::mismatch(a.begin(), a.begin() + std::min(a.size(), b.size()), b.begin()).first -
                             a.begin());
}

// What the chat template writes after `earlier` to open the assistant's turn: the
// generation prompt less the conversation before it.
absl::StatusOr<std::string> GenerationPrompt(const models::Tokenizer& tokenizer,
                                             const std::vector<models::ChatMessage>& earlier,
                                             const std::vector<nlohmann::ordered_json>& tools) {
  ASSIGN_OR_RETURN(const std::string without, tokenizer.RenderChat(earlier, /*add_generation_prompt=*/false, tools));
  ASSIGN_OR_RETURN(std::string with, tokenizer.RenderChat(earlier, /*add_generation_prompt=*/true, tools));
  ROLLOUT_CHECK(absl::StartsWith(with, without)) << "a generation prompt that rewrites the conversation before it";
  return with.substr(without.size());
}

}  // namespace

absl::StatusOr<Conversation> ParseConversation(const std::string& json_text, const std::string& where) {
  const nlohmann::ordered_json messages =
      nlohmann::ordered_json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!messages.is_array()) return absl::InvalidArgumentError(absl::StrCat(where, ": not a JSON list of chat messages"));
  Conversation conversation;
  absl::StatusOr<models::ChatPrompt> parsed = models::ParseChatPrompt(messages);
  if (!parsed.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", parsed.status().message()));
  conversation.messages = std::move(parsed->messages);
  for (size_t i = 0; i < conversation.messages.size(); ++i) {
    absl::StatusOr<bool> trains = MessageTrains(messages[i]);
    if (!trains.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": message ", i, ": ", trains.status().message()));
    }
    conversation.trained.push_back(*trains ? 1 : 0);
  }
  return conversation;
}

absl::StatusOr<ConversationTokens> EncodeConversation(const models::Tokenizer& tokenizer,
                                                      const Conversation& conversation, const std::string& where) {
  const std::vector<models::ChatMessage>& messages = conversation.messages;
  const auto context = [&](const absl::Status& status) {
    return absl::Status(status.code(), absl::StrCat(where, ": ", status.message()));
  };
  absl::StatusOr<models::RenderedChat> rendered = tokenizer.RenderChatWithMessageEnds(messages, conversation.tools);
  if (!rendered.ok()) return context(rendered.status());
  const absl::string_view text = rendered->text;
  ConversationTokens tokens;
  size_t start = 0;  // where message i's part of the text begins
  for (size_t i = 0; i < messages.size(); ++i) {
    const size_t end = rendered->message_ends[i];
    const std::vector<int32_t> ids = tokenizer.Encode(text.substr(start, end - start));
    size_t header = ids.size();  // untrained messages: no token counts
    if (conversation.trained[i] == 1) {
      absl::StatusOr<std::string> opening =
          GenerationPrompt(tokenizer, {messages.begin(), messages.begin() + i}, conversation.tools);
      if (!opening.ok()) return context(opening.status());
      header = SharedPrefix(ids, tokenizer.Encode(*opening));
    }
    tokens.ids.insert(tokens.ids.end(), ids.begin(), ids.end());
    for (size_t t = 0; t < ids.size(); ++t) tokens.counted.push_back(t >= header ? 1 : 0);
    start = end;
  }
  return tokens;
}

absl::StatusOr<SftRowTokens> ConversationSftRow(const models::Tokenizer& tokenizer, const Conversation& conversation,
                                                const PromptEncoding& encoding, int64_t max_response_length,
                                                const std::string& where) {
  ASSIGN_OR_RETURN(const ConversationTokens tokens, EncodeConversation(tokenizer, conversation, where));
  const size_t first = static_cast<size_t>(std::find(tokens.counted.begin(), tokens.counted.end(), 1) -
                                           tokens.counted.begin());
  if (first == tokens.ids.size()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": no trained assistant reply has a token to train on"));
  }
  SftRowTokens row;
  ASSIGN_OR_RETURN(row.prompt, TruncateTokens({tokens.ids.begin(), tokens.ids.begin() + first},
                                              encoding.max_prompt_length, "data.max_prompt_length",
                                              PromptTruncation(encoding.truncation),
                                              absl::StrCat(where, ": the conversation before its first reply")));
  ASSIGN_OR_RETURN(const std::vector<int32_t> kept,
                   TruncatedPositions(tokens.ids.size() - first, max_response_length, "data.max_response_length",
                                 ResponseTruncation(encoding.truncation),
                                 absl::StrCat(where, ": the conversation from its first reply")));
  for (const int32_t position : kept) {
    row.response.push_back(tokens.ids[first + static_cast<size_t>(position)]);
    row.counted.push_back(tokens.counted[first + static_cast<size_t>(position)]);
  }
  return row;
}

}  // namespace rollout::workers
