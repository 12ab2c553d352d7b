#include "workers/response_scores.h"

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

}  // namespace rollout::workers
