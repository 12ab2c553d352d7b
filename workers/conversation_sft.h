// Conversations for SFT and DPO (verl's multi-turn SFT, TRL's conversational rows):
// token ids with the tokens the loss counts, and an SFT row of them.
//
// A conversation's tokens are the chat template's rendering of all its messages at once,
// cut where the template writes each message (ChatTemplate::RenderWithMessageEnds). A
// trained message's tokens count (common/chat_training_marks.h: assistant messages
// unless marked off), except the header its turn opens with (the tokens it shares with
// the generation prompt), so the model learns each reply and its end-of-turn tokens;
// other messages do not count. Where the template writes a reply differently once a user
// message follows it (Qwen3 keeps a reply's reasoning only after the last user message,
// and gives the final reply an empty think block if it has none), the reply trains as
// the whole conversation writes it. verl's multi-turn SFT renders one message at a time
// instead, which for such templates trains on sequences the model never sees (its
// ignore_input_ids_mismatch).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "models/chat_template.h"
#include "models/tokenizer.h"
#include "workers/prompt_encoding.h"
#include "workers/sft_batch.h"

namespace rollout::workers {

struct Conversation {
  std::vector<models::ChatMessage> messages;
  std::vector<uint8_t> trained;    // per message: 1 where the loss counts its tokens
  std::vector<nlohmann::ordered_json> tools = {};  // the JSON schemas offered (chat_template.h)
};

// Chat messages as JSON text (a list of common/chat_json.h's messages), each trained as
// its marks say (common/chat_training_marks.h), without tools. InvalidArgument naming
// `where` and the message for anything else.
absl::StatusOr<Conversation> ParseConversation(const std::string& json_text, const std::string& where);

struct ConversationTokens {
  std::vector<int32_t> ids;
  std::vector<uint8_t> counted;  // per token: 1 for trained replies' tokens
};

// `where` ("sft row 3") prefixes the template's errors.
absl::StatusOr<ConversationTokens> EncodeConversation(const models::Tokenizer& tokenizer,
                                                      const Conversation& conversation, const std::string& where);

// A conversation as one SFT row (sft_batch.h): the tokens before the first counted one
// are the prompt, cut to encoding.max_prompt_length as data.truncation says, the rest
// the response, cut to `max_response_length` the same way, with its counted tokens.
// InvalidArgument naming `where` for EncodeConversation's errors, a conversation with
// nothing counted, or (truncation "error") a part too long.
absl::StatusOr<SftRowTokens> ConversationSftRow(const models::Tokenizer& tokenizer, const Conversation& conversation,
                                                const PromptEncoding& encoding, int64_t max_response_length,
                                                const std::string& where);

}  // namespace rollout::workers
