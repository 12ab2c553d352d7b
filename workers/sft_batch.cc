#include "workers/sft_batch.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/status_macros.h"
#include "models/json_prompt.h"
#include "workers/conversation_sft.h"

namespace rollout::workers {

namespace {

absl::StatusOr<SftRowTokens> TextResponseRow(const models::Tokenizer& tokenizer, const SftRows& rows, size_t i,
                                             const PromptEncoding& encoding, int64_t max_response_length,
                                             const std::string& where) {
  SftRowTokens tokens;
  ASSIGN_OR_RETURN(tokens.prompt,
                   EncodePrompt(tokenizer, rows.prompts[i], rows.formats[i] == "chat", encoding, where));
  std::vector<int32_t> response = tokenizer.Encode(rows.responses[i]);
  if (!tokenizer.eos_token_ids().empty()) response.push_back(tokenizer.eos_token_ids().front());
  ASSIGN_OR_RETURN(tokens.response,
                   TruncateTokens(std::move(response), max_response_length, "data.max_response_length",
                                  ResponseTruncation(encoding.truncation), absl::StrCat(where, ": the response")));
  tokens.counted.assign(tokens.response.size(), 1);
  return tokens;
}

// A chat prompt and a messages response as one conversation, the prompt's messages not
// trained (TRL's prompt-completion rows: the loss is the completion's).
absl::StatusOr<SftRowTokens> MessagesResponseRow(const models::Tokenizer& tokenizer, const SftRows& rows, size_t i,
                                                 const PromptEncoding& encoding, int64_t max_response_length,
                                                 const std::string& where) {
  if (rows.formats[i] != "chat") {
    return absl::InvalidArgumentError(absl::StrCat(where, ": a messages response needs a chat prompt"));
  }
  absl::StatusOr<models::ChatPrompt> prompt = models::ParseChatPromptText(rows.prompts[i]);
  if (!prompt.ok()) return absl::InvalidArgumentError(absl::StrCat(where, " (prompt): ", prompt.status().message()));
  ASSIGN_OR_RETURN(Conversation conversation, ParseConversation(rows.responses[i], where + " (response)"));
  conversation.messages.insert(conversation.messages.begin(), prompt->messages.begin(), prompt->messages.end());
  conversation.trained.insert(conversation.trained.begin(), prompt->messages.size(), 0);
  conversation.tools = std::move(prompt->tools);
  return ConversationSftRow(tokenizer, conversation, encoding, max_response_length, where);
}

// Each row's tokens, its parts cut to their lengths.
absl::StatusOr<std::vector<SftRowTokens>> RowTokens(const models::Tokenizer& tokenizer, const SftRows& rows,
                                                    const PromptEncoding& encoding, int64_t max_response_length) {
  const size_t count = rows.prompts.size();
  if (rows.formats.size() != count || rows.responses.size() != count || rows.response_formats.size() != count) {
    return absl::InvalidArgumentError(
        "sft rows: prompt, prompt_format, response and response_format columns differ in length");
  }
  std::vector<SftRowTokens> tokens(count);
  for (size_t i = 0; i < count; ++i) {
    const std::string where = absl::StrCat("sft row ", i);
    if (rows.formats[i] != "text" && rows.formats[i] != "chat") {
      return absl::InvalidArgumentError(absl::StrCat(where, ": prompt_format '", rows.formats[i], "'"));
    }
    if (rows.response_formats[i] == "text") {
      ASSIGN_OR_RETURN(tokens[i], TextResponseRow(tokenizer, rows, i, encoding, max_response_length, where));
    } else if (rows.response_formats[i] == "messages") {
      ASSIGN_OR_RETURN(tokens[i], MessagesResponseRow(tokenizer, rows, i, encoding, max_response_length, where));
    } else {
      return absl::InvalidArgumentError(absl::StrCat(where, ": response_format '", rows.response_formats[i], "'"));
    }
  }
  return tokens;
}

// `row`'s prompt and response together cut to `max_length`, split again where the
// prompt ends.
absl::StatusOr<SftRowTokens> CutWholeRow(const SftRowTokens& row, int64_t max_length, const std::string& truncation,
                                         const std::string& where) {
  const size_t prompt_length = row.prompt.size();
  ASSIGN_OR_RETURN(const std::vector<int32_t> kept,
                   TruncatedPositions(prompt_length + row.response.size(), max_length, "data.max_length",
                                      PromptTruncation(truncation), where + ": the row"));
  SftRowTokens cut;
  for (const int32_t kept_position : kept) {
    const size_t position = static_cast<size_t>(kept_position);
    if (position < prompt_length) {
      cut.prompt.push_back(row.prompt[position]);
    } else {
      cut.response.push_back(row.response[position - prompt_length]);
      cut.counted.push_back(row.counted[position - prompt_length]);
    }
  }
  return cut;
}

}  // namespace

absl::StatusOr<PolicyBatch> BuildSftBatch(const models::Tokenizer& tokenizer, const SftRows& rows,
                                          const PromptEncoding& encoding,
                                          int64_t max_response_length) {
  ASSIGN_OR_RETURN(const std::vector<SftRowTokens> tokens, RowTokens(tokenizer, rows, encoding, max_response_length));
  return LayOutSftRows(tokens, encoding.max_prompt_length, max_response_length,
                       tokenizer.pad_token_id().value_or(0));
}

absl::StatusOr<PolicyBatch> BuildSftBatchWithin(const models::Tokenizer& tokenizer, const SftRows& rows,
                                                int64_t max_length, const std::string& truncation) {
  constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();
  PromptEncoding whole_prompts;
  whole_prompts.max_prompt_length = kUnbounded;
  whole_prompts.truncation = truncation;
  ASSIGN_OR_RETURN(std::vector<SftRowTokens> tokens, RowTokens(tokenizer, rows, whole_prompts, kUnbounded));
  for (size_t i = 0; i < tokens.size(); ++i) {
    ASSIGN_OR_RETURN(tokens[i], CutWholeRow(tokens[i], max_length, truncation, absl::StrCat("sft row ", i)));
  }
  return LayOutWholeSftRows(tokens, tokenizer.pad_token_id().value_or(0));
}

PolicyBatch LayOutSftRows(const std::vector<SftRowTokens>& rows, int64_t max_prompt_length,
                          int64_t max_response_length, int32_t pad_id) {
  const int64_t count = static_cast<int64_t>(rows.size());
  const int64_t p = max_prompt_length;
  const int64_t r = max_response_length;
  at::Tensor ids = at::full({count, p + r}, pad_id, at::kLong);
  at::Tensor mask = at::zeros({count, p + r}, at::kLong);
  at::Tensor counted = at::zeros({count, r}, at::kLong);
  auto ids_a = ids.accessor<int64_t, 2>();
  auto mask_a = mask.accessor<int64_t, 2>();
  auto counted_a = counted.accessor<int64_t, 2>();
  for (int64_t row = 0; row < count; ++row) {
    const SftRowTokens& tokens = rows[static_cast<size_t>(row)];
    const int64_t prompt_length = static_cast<int64_t>(tokens.prompt.size());
    const int64_t response_length = static_cast<int64_t>(tokens.response.size());
    ROLLOUT_CHECK(prompt_length <= p && response_length <= r && tokens.counted.size() == tokens.response.size())
        << "sft row " << row << " does not fit its layout";
    for (int64_t t = 0; t < prompt_length; ++t) {
      ids_a[row][p - prompt_length + t] = tokens.prompt[static_cast<size_t>(t)];
      mask_a[row][p - prompt_length + t] = 1;
    }
    for (int64_t t = 0; t < response_length; ++t) {
      ids_a[row][p + t] = tokens.response[static_cast<size_t>(t)];
      mask_a[row][p + t] = 1;
      counted_a[row][t] = tokens.counted[static_cast<size_t>(t)];
    }
  }
  PolicyBatch batch;
  batch.input_ids = ids;
  batch.attention_mask = mask;
  batch.position_ids = (mask.cumsum(1) - 1).clamp_min(0);
  batch.responses = ids.narrow(1, p, r).clone();
  batch.response_mask = counted;
  return batch;
}

PolicyBatch LayOutWholeSftRows(const std::vector<SftRowTokens>& rows, int32_t pad_id) {
  const int64_t count = static_cast<int64_t>(rows.size());
  int64_t width = 2;
  for (const SftRowTokens& tokens : rows) {
    width = std::max(width, static_cast<int64_t>(tokens.prompt.size() + tokens.response.size()));
  }
  at::Tensor ids = at::full({count, width}, pad_id, at::kLong);
  at::Tensor mask = at::zeros({count, width}, at::kLong);
  at::Tensor counted = at::zeros({count, width - 1}, at::kLong);
  auto ids_a = ids.accessor<int64_t, 2>();
  auto mask_a = mask.accessor<int64_t, 2>();
  auto counted_a = counted.accessor<int64_t, 2>();
  for (int64_t row = 0; row < count; ++row) {
    const SftRowTokens& tokens = rows[static_cast<size_t>(row)];
    ROLLOUT_CHECK(tokens.counted.size() == tokens.response.size()) << "sft row " << row << " miscounts its response";
    const int64_t prompt_length = static_cast<int64_t>(tokens.prompt.size());
    for (int64_t t = 0; t < prompt_length; ++t) {
      ids_a[row][t] = tokens.prompt[static_cast<size_t>(t)];
      mask_a[row][t] = 1;
    }
    for (size_t r = 0; r < tokens.response.size(); ++r) {
      const int64_t t = prompt_length + static_cast<int64_t>(r);
      ids_a[row][t] = tokens.response[r];
      mask_a[row][t] = 1;
      if (t > 0) counted_a[row][t - 1] = tokens.counted[r];
    }
  }
  PolicyBatch batch;
  batch.input_ids = ids;
  batch.attention_mask = mask;
  batch.position_ids = (mask.cumsum(1) - 1).clamp_min(0);
  batch.responses = ids.narrow(1, 1, width - 1).clone();
  batch.response_mask = counted;
  return batch;
}

}  // namespace rollout::workers
