// Prompt/response pairs as a PolicyBatch for supervised fine-tuning: the prompt encoded
// as the rollout encodes it (prompt_encoding.h) and left-padded to max_prompt_length,
// the response's tokens plus the end-of-sequence token right-padded to
// max_response_length, so the model learns to answer and then stop. A response longer
// than that is cut (truncation left/right/middle keep as for prompts) or, with
// truncation "error", an InvalidArgument naming the row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/tokenizer.h"
#include "workers/policy_batch.h"
#include "workers/prompt_encoding.h"

namespace rollout::workers {

struct SftRows {
  std::vector<std::string> prompts;
  std::vector<std::string> formats;  // "text" | "chat" per row
  std::vector<std::string> responses;
};

absl::StatusOr<PolicyBatch> BuildSftBatch(const models::Tokenizer& tokenizer, const SftRows& rows,
                                          const PromptEncoding& encoding,
                                          int64_t max_response_length);

// One SFT row's tokens, already within the lengths LayOutSftRows is given.
struct SftRowTokens {
  std::vector<int32_t> prompt;
  std::vector<int32_t> response;
  std::vector<uint8_t> counted;  // per response token: 1 when the loss counts it
};

// The rows in verl's layout: each prompt left-padded to `max_prompt_length`, each
// response right-padded to `max_response_length` (padding `pad_id`); attention_mask 1 on
// every token, response_mask 1 on the counted ones.
PolicyBatch LayOutSftRows(const std::vector<SftRowTokens>& rows, int64_t max_prompt_length,
                          int64_t max_response_length, int32_t pad_id);

}  // namespace rollout::workers
