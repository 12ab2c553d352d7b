#include "workers/rollout_batch.h"

#include <ATen/ATen.h>

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::workers {

std::vector<std::vector<RolloutResponse>> ResponsesOf(const std::vector<engine::RequestOutput>& outputs) {
  std::vector<std::vector<RolloutResponse>> responses(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (const engine::Completion& sample : outputs[i].samples) {
      RolloutResponse response;
      response.tokens = sample.tokens;
      response.log_probs = sample.log_probs;
      response.text = sample.text;
      response.finish_reason = engine::FinishReasonName(sample.finish_reason);
      responses[i].push_back(std::move(response));
    }
  }
  return responses;
}

absl::StatusOr<Batch> BuildRolloutBatch(const std::vector<std::vector<int32_t>>& prompts,
                                        const std::vector<std::vector<RolloutResponse>>& responses,
                                        const RolloutLayout& layout) {
  if (prompts.size() != responses.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(prompts.size(), " prompts but ", responses.size(), " outputs"));
  }
  int64_t rows = 0;
  bool multi_turn = false;
  for (const std::vector<RolloutResponse>& samples : responses) {
    rows += static_cast<int64_t>(samples.size());
    for (const RolloutResponse& sample : samples) multi_turn = multi_turn || sample.num_turns > 0;
  }
  const int64_t p = layout.max_prompt_length;
  const int64_t r = layout.max_response_length;
  at::Tensor prompt_ids = at::full({rows, p}, layout.pad_token_id, at::kLong);
  at::Tensor response_ids = at::full({rows, r}, layout.pad_token_id, at::kLong);
  at::Tensor prompt_mask = at::zeros({rows, p}, at::kLong);
  at::Tensor response_attention = at::zeros({rows, r}, at::kLong);
  at::Tensor response_mask = at::zeros({rows, r}, at::kLong);
  at::Tensor num_turns = at::zeros({rows}, at::kLong);
  at::Tensor log_probs = at::zeros({rows, r}, at::kFloat);
  auto prompt_ids_a = prompt_ids.accessor<int64_t, 2>();
  auto prompt_mask_a = prompt_mask.accessor<int64_t, 2>();
  auto response_ids_a = response_ids.accessor<int64_t, 2>();
  auto response_attention_a = response_attention.accessor<int64_t, 2>();
  auto response_mask_a = response_mask.accessor<int64_t, 2>();
  auto log_probs_a = log_probs.accessor<float, 2>();
  auto num_turns_a = num_turns.accessor<int64_t, 1>();
  std::vector<std::string> texts, finish_reasons, tool_rewards, turn_scores;
  int64_t row = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const std::vector<int32_t>& prompt = prompts[i];
    if (static_cast<int64_t>(prompt.size()) > p) {
      return absl::InvalidArgumentError(absl::StrCat("prompt ", i, " has ", prompt.size(),
                                                     " tokens; data.max_prompt_length is ", p));
    }
    for (size_t s = 0; s < responses[i].size(); ++s, ++row) {
      const int64_t offset = p - static_cast<int64_t>(prompt.size());
      for (size_t t = 0; t < prompt.size(); ++t) {
        prompt_ids_a[row][offset + static_cast<int64_t>(t)] = prompt[t];
        prompt_mask_a[row][offset + static_cast<int64_t>(t)] = 1;
      }
      const RolloutResponse& sample = responses[i][s];
      if (static_cast<int64_t>(sample.tokens.size()) > r) {
        return absl::InvalidArgumentError(absl::StrCat("prompt ", i, " sample ", s, " has ",
                                                       sample.tokens.size(),
                                                       " tokens; data.max_response_length is ", r));
      }
      for (size_t t = 0; t < sample.tokens.size(); ++t) {
        response_ids_a[row][static_cast<int64_t>(t)] = sample.tokens[t];
        response_attention_a[row][static_cast<int64_t>(t)] = 1;
        response_mask_a[row][static_cast<int64_t>(t)] = sample.generated.empty() || sample.generated[t] ? 1 : 0;
        log_probs_a[row][static_cast<int64_t>(t)] = sample.log_probs[t];
      }
      num_turns_a[row] = sample.num_turns;
      tool_rewards.push_back(nlohmann::json(sample.tool_rewards).dump());
      turn_scores.push_back(nlohmann::json(sample.turn_scores).dump());
      texts.push_back(sample.text);
      finish_reasons.push_back(sample.finish_reason);
    }
  }
  const at::Tensor attention_mask = at::cat({prompt_mask, response_attention}, 1);
  Batch batch;
  RETURN_IF_ERROR(batch.AddTensor("prompts", prompt_ids));
  RETURN_IF_ERROR(batch.AddTensor("responses", response_ids));
  RETURN_IF_ERROR(batch.AddTensor("input_ids", at::cat({prompt_ids, response_ids}, 1)));
  RETURN_IF_ERROR(batch.AddTensor("attention_mask", attention_mask));
  RETURN_IF_ERROR(batch.AddTensor("position_ids", (attention_mask.cumsum(1) - 1).clamp_min(0)));
  RETURN_IF_ERROR(batch.AddTensor("response_mask", response_mask));
  RETURN_IF_ERROR(batch.AddTensor("rollout_log_probs", log_probs));
  RETURN_IF_ERROR(batch.AddStrings("response_text", std::move(texts)));
  RETURN_IF_ERROR(batch.AddStrings("finish_reason", std::move(finish_reasons)));
  if (multi_turn) {
    RETURN_IF_ERROR(batch.AddTensor("num_turns", num_turns));
    RETURN_IF_ERROR(batch.AddStrings("tool_rewards", std::move(tool_rewards)));
    RETURN_IF_ERROR(batch.AddStrings("turn_scores", std::move(turn_scores)));
  }
  return batch;
}

}  // namespace rollout::workers
