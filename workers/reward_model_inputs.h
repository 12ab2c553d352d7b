// The sequences a reward model scores (verl's RewardModelWorker): the actor's token ids
// as they are, or, when the reward model has its own tokenizer and chat template
// (reward_model.model.input_tokenizer set), each prompt and response re-rendered in them
// (verl's _switch_chat_template).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/tokenizer.h"

namespace rollout::workers {

// [B, L] each; the rows' last tokens (the largest index where attention_mask is 1) are
// where a reward model's output is read.
struct RewardModelInputs {
  at::Tensor input_ids;       // int64
  at::Tensor attention_mask;  // int64
  at::Tensor position_ids;    // int64
};

struct ChatTemplateSwitch {
  const models::Tokenizer* source = nullptr;  // decodes the responses: the actor's tokenizer
  const models::Tokenizer* target = nullptr;  // the reward model's tokenizer and chat template
  int64_t max_length = 0;                     // > 0: longer rows keep their first tokens
};

// A response's valid ids decoded by `source` (special tokens kept), with the text of
// every end-of-sequence token removed, as verl removes the EOS.
std::string ResponseText(const models::Tokenizer& source, const std::vector<int32_t>& ids);

// Row i, in the target tokenizer: a chat prompt (`formats[i]` "chat", `prompts[i]` the
// JSON messages) rendered with the target's chat template after the response is
// appended as the assistant's message, without a generation prompt; a text prompt
// ("text") as prompts[i] + response, encoded as text. Truncated to max_length, right-
// padded with 0. `responses` [B, R] int64 ids, `response_lengths` [B] the valid count
// of each row. InvalidArgument naming the row for a bad format or messages, a row
// with no tokens, or a chat template the target cannot render.
absl::StatusOr<RewardModelInputs> SwitchChatTemplate(const ChatTemplateSwitch& templates,
                                                     const std::vector<std::string>& prompts,
                                                     const std::vector<std::string>& formats,
                                                     const at::Tensor& responses,
                                                     const at::Tensor& response_lengths);

}  // namespace rollout::workers
