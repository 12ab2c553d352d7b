#include "workers/response_scores.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::workers {

models::TokenScores ScoreResponses(const models::CausalLM& model, const at::Tensor& input_ids,
                                   const at::Tensor& position_ids, const at::Tensor& attention_mask,
                                   const at::Tensor& responses, bool with_entropy,
                                   double temperature) {
  const int64_t total = input_ids.size(1);
  const int64_t response = responses.size(1);
  const at::Tensor hidden = model.Forward(input_ids, position_ids, attention_mask);
  return models::ScoreTokens(model, hidden.narrow(1, total - response - 1, response), responses,
                             with_entropy, temperature);
}

absl::StatusOr<models::TokenScores> ScoreResponsesNoGrad(const models::CausalLM& model,
                                                         const PolicyBatch& batch,
                                                         int64_t micro_batch_rows,
                                                         bool with_entropy, double temperature) {
  RETURN_IF_ERROR(CheckPolicyBatch(batch));
  if (micro_batch_rows < 1) {
    return absl::InvalidArgumentError(absl::StrCat("micro-batch rows is ", micro_batch_rows, "; must be >= 1"));
  }
  c10::NoGradGuard no_grad;
  std::vector<at::Tensor> log_probs, entropies;
  const int64_t rows = batch.input_ids.size(0);
  for (int64_t start = 0; start < rows; start += micro_batch_rows) {
    const PolicyBatch micro = SliceRows(batch, start, std::min(micro_batch_rows, rows - start));
    models::TokenScores scores = ScoreResponses(model, micro.input_ids, micro.position_ids,
                                                micro.attention_mask, micro.responses, with_entropy,
                                                temperature);
    log_probs.push_back(scores.log_probs);
    if (with_entropy) entropies.push_back(scores.entropy);
  }
  const at::Tensor empty = at::zeros({0, batch.responses.size(1)},
                                     batch.input_ids.options().dtype(at::kFloat));
  models::TokenScores result;
  result.log_probs = log_probs.empty() ? empty : at::cat(log_probs);
  if (with_entropy) result.entropy = entropies.empty() ? empty : at::cat(entropies);
  return result;
}

}  // namespace rollout::workers
