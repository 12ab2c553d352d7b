// Conversations for SFT and DPO (verl's multi-turn SFT, TRL's conversational rows):
// token ids with the tokens the loss counts, and an SFT row of them.
//
// A conversation is rendered with the model's chat template one message at a time:
// message i's tokens encode what Render(messages[0..i]) adds to Render(messages[0..i-1]),
// so together they are the whole conversation as the template writes it. An assistant
// message's tokens count, except the header its turn opens with (the tokens it shares
// with the generation prompt), so the model learns each reply and its end-of-turn
// tokens; system and user messages do not count. A template that does not render a
// conversation's first messages as the start of the whole (Qwen3 drops the reasoning of
// replies before the last user message, and closes only the final reply's think block)
// is InvalidArgument naming the message.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/chat_template.h"
#include "models/tokenizer.h"
#include "workers/prompt_encoding.h"
#include "workers/sft_batch.h"

namespace rollout::workers {

struct ConversationTokens {
  std::vector<int32_t> ids;
  std::vector<uint8_t> counted;  // per token: 1 for assistant replies' tokens
};

// `where` ("sft row 3") prefixes errors: the template's, and the unstable prefix above.
absl::StatusOr<ConversationTokens> EncodeConversation(const models::Tokenizer& tokenizer,
                                                      const std::vector<models::ChatMessage>& messages,
                                                      const std::string& where);

// A conversation as one SFT row (sft_batch.h): the tokens before the first counted one
// are the prompt, cut to encoding.max_prompt_length as data.truncation says, the rest
// the response, cut to `max_response_length` the same way, with its counted tokens.
// InvalidArgument naming `where` for EncodeConversation's errors, a conversation with
// nothing counted, or (truncation "error") a part too long.
absl::StatusOr<SftRowTokens> ConversationSftRow(const models::Tokenizer& tokenizer,
                                                const std::vector<models::ChatMessage>& messages,
                                                const PromptEncoding& encoding, int64_t max_response_length,
                                                const std::string& where);

}  // namespace rollout::workers
