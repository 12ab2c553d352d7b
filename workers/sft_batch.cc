#include "workers/sft_batch.h"

#include <ATen/ATen.h>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::workers {

absl::StatusOr<PolicyBatch> BuildSftBatch(const models::Tokenizer& tokenizer, const SftRows& rows,
                                          const PromptEncoding& encoding,
                                          int64_t max_response_length) {
  const int64_t count = static_cast<int64_t>(rows.prompts.size());
  if (rows.formats.size() != rows.prompts.size() || rows.responses.size() != rows.prompts.size()) {
    return absl::InvalidArgumentError("sft rows: prompt, prompt_format and response columns differ in length");
  }
  const int64_t p = encoding.max_prompt_length;
  const int64_t r = max_response_length;
  const int32_t pad = tokenizer.pad_token_id().value_or(0);
  at::Tensor ids = at::full({count, p + r}, pad, at::kLong);
  at::Tensor mask = at::zeros({count, p + r}, at::kLong);
  auto ids_a = ids.accessor<int64_t, 2>();
  auto mask_a = mask.accessor<int64_t, 2>();
  for (int64_t row = 0; row < count; ++row) {
    const size_t i = static_cast<size_t>(row);
    const std::string where = absl::StrCat("sft row ", row);
    if (rows.formats[i] != "text" && rows.formats[i] != "chat") {
      return absl::InvalidArgumentError(absl::StrCat(where, ": prompt_format '", rows.formats[i], "'"));
    }
    ASSIGN_OR_RETURN(const std::vector<int32_t> prompt,
                     EncodePrompt(tokenizer, rows.prompts[i], rows.formats[i] == "chat", encoding, where));
    std::vector<int32_t> response = tokenizer.Encode(rows.responses[i]);
    if (!tokenizer.eos_token_ids().empty()) response.push_back(tokenizer.eos_token_ids().front());
    ASSIGN_OR_RETURN(response, TruncatePrompt(std::move(response), r, encoding.truncation,
                                              absl::StrCat(where, " (response)")));
    const int64_t offset = p - static_cast<int64_t>(prompt.size());
    for (size_t t = 0; t < prompt.size(); ++t) {
      ids_a[row][offset + static_cast<int64_t>(t)] = prompt[t];
      mask_a[row][offset + static_cast<int64_t>(t)] = 1;
    }
    for (size_t t = 0; t < response.size(); ++t) {
      ids_a[row][p + static_cast<int64_t>(t)] = response[t];
      mask_a[row][p + static_cast<int64_t>(t)] = 1;
    }
  }
  PolicyBatch batch;
  batch.input_ids = ids;
  batch.attention_mask = mask;
  batch.position_ids = (mask.cumsum(1) - 1).clamp_min(0);
  batch.responses = ids.narrow(1, p, r).clone();
  batch.response_mask = mask.narrow(1, p, r).clone();
  return batch;
}

}  // namespace rollout::workers
