// Prompt/response pairs as a PolicyBatch for supervised fine-tuning (and DPO's chosen
// and rejected), in verl's layout: the prompt left-padded to max_prompt_length, the
// response right-padded to max_response_length with the mask of the tokens the loss
// counts. A text response is its tokens plus the end-of-sequence token, so the model
// learns to answer and then stop, after the prompt encoded as the rollout encodes it
// (prompt_encoding.h). A messages response continues its chat prompt's conversation:
// conversation_sft.h's tokens, the prompt's messages untrained, the prompt ending where
// the first counted token starts.
// A part longer than its length is cut as data.truncation says (prompt_encoding.h's
// PromptTruncation and ResponseTruncation) or, with "error", an InvalidArgument naming
// the row and the length.
//
// BuildSftBatchWithin bounds each row as a whole instead, as verl's SFT trainer and TRL's
// trainers read data.max_length: the prompt and response together, cut as a prompt is
// (keep_end keeps the row's end); the rows then sit left-aligned and right-padded, every
// token but a row's first in the response columns, only the response's counted.
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
  std::vector<std::string> response_formats;  // "text" | "messages" (JSON) per row
};

absl::StatusOr<PolicyBatch> BuildSftBatch(const models::Tokenizer& tokenizer, const SftRows& rows,
                                          const PromptEncoding& encoding,
                                          int64_t max_response_length);

// `max_length` >= 1; `truncation` is data.truncation. InvalidArgument as BuildSftBatch,
// and naming data.max_length for a row that is too long under truncation "error".
absl::StatusOr<PolicyBatch> BuildSftBatchWithin(const models::Tokenizer& tokenizer, const SftRows& rows,
                                                int64_t max_length, const std::string& truncation);

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

// The rows as whole sequences: each row's prompt then response from column 0,
// right-padded to the longest row (at least 2 columns); the responses are every column
// but the first, response_mask 1 on the counted response tokens. A row's first token is
// context only, even a counted one (a row cut to start inside its response).
PolicyBatch LayOutWholeSftRows(const std::vector<SftRowTokens>& rows, int32_t pad_id);

}  // namespace rollout::workers
