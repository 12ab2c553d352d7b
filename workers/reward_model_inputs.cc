#include "workers/reward_model_inputs.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/status_macros.h"
#include "models/json_prompt.h"

namespace rollout::workers {
namespace {

// Row `row`'s ids in the target tokenizer, before truncation.
absl::StatusOr<std::vector<int32_t>> RenderRow(const models::Tokenizer& target, const std::string& prompt,
                                               const std::string& format, const std::string& response,
                                               const std::string& where) {
  if (format == "text") return target.Encode(prompt + response);
  if (format != "chat") {
    return absl::InvalidArgumentError(absl::StrCat(where, ": prompt_format '", format, "'; expected text or chat"));
  }
  absl::StatusOr<models::ChatPrompt> chat = models::ParseChatPromptText(prompt);
  if (!chat.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", chat.status().message()));
  chat->messages.push_back({"assistant", response});
  absl::StatusOr<std::vector<int32_t>> ids =
      target.EncodeChat(chat->messages, /*add_generation_prompt=*/false, chat->tools);
  if (!ids.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": the reward model's chat template: ", ids.status().message()));
  }
  return *std::move(ids);
}

}  // namespace

std::string ResponseText(const models::Tokenizer& source, const std::vector<int32_t>& ids) {
  std::string text = source.Decode(ids, /*skip_special_tokens=*/false);
  for (int32_t eos : source.eos_token_ids()) {
    const std::string eos_text = source.Decode({eos}, /*skip_special_tokens=*/false);
    if (!eos_text.empty()) text = absl::StrReplaceAll(text, {{eos_text, ""}});
  }
  return text;
}

absl::StatusOr<RewardModelInputs> SwitchChatTemplate(const ChatTemplateSwitch& templates,
                                                     const std::vector<std::string>& prompts,
                                                     const std::vector<std::string>& formats,
                                                     const at::Tensor& responses,
                                                     const at::Tensor& response_lengths) {
  const int64_t rows = responses.size(0);
  if (static_cast<int64_t>(prompts.size()) != rows || static_cast<int64_t>(formats.size()) != rows ||
      response_lengths.numel() != rows) {
    return absl::InvalidArgumentError(absl::StrCat("reward model inputs: ", prompts.size(), " prompts, ",
                                                   formats.size(), " formats and ", response_lengths.numel(),
                                                   " response lengths for ", rows, " responses"));
  }
  const at::Tensor ids_cpu = responses.to(at::kCPU, at::kInt).contiguous();
  const at::Tensor lengths_cpu = response_lengths.to(at::kCPU, at::kLong).contiguous();
  std::vector<std::vector<int32_t>> rendered;
  int64_t longest = 0;
  for (int64_t row = 0; row < rows; ++row) {
    const int32_t* row_ids = ids_cpu[row].data_ptr<int32_t>();
    const int64_t length = std::min(lengths_cpu[row].item<int64_t>(), responses.size(1));
    const std::string response = ResponseText(*templates.source, std::vector<int32_t>(row_ids, row_ids + length));
    const std::string where = absl::StrCat("reward model input row ", row);
    ASSIGN_OR_RETURN(std::vector<int32_t> ids,
                     RenderRow(*templates.target, prompts[row], formats[row], response, where));
    if (ids.empty()) return absl::InvalidArgumentError(absl::StrCat(where, ": no tokens"));
    if (static_cast<int64_t>(ids.size()) > templates.max_length) ids.resize(static_cast<size_t>(templates.max_length));
    longest = std::max(longest, static_cast<int64_t>(ids.size()));
    rendered.push_back(std::move(ids));
  }
  RewardModelInputs inputs;
  inputs.input_ids = at::zeros({rows, longest}, at::kLong);
  inputs.attention_mask = at::zeros({rows, longest}, at::kLong);
  auto ids_a = inputs.input_ids.accessor<int64_t, 2>();
  auto mask_a = inputs.attention_mask.accessor<int64_t, 2>();
  for (int64_t row = 0; row < rows; ++row) {
    for (size_t t = 0; t < rendered[static_cast<size_t>(row)].size(); ++t) {
      ids_a[row][static_cast<int64_t>(t)] = rendered[static_cast<size_t>(row)][t];
      mask_a[row][static_cast<int64_t>(t)] = 1;
    }
  }
  inputs.position_ids = (inputs.attention_mask.cumsum(1) - 1).clamp_min(0);
  return inputs;
}

}  // namespace rollout::workers
