#include "models/token_scores.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <vector>

#ifdef ROLLOUT_WITH_CUDA
#include "models/fused_token_scores.h"
#endif

namespace rollout::models {

TokenScores ScoreTokens(const CausalLM& model, const at::Tensor& hidden, const at::Tensor& targets,
                        ScoreExtras extras, double temperature, int64_t chunk_tokens) {
  const int64_t b = hidden.size(0);
  const int64_t t = hidden.size(1);
  const at::Tensor flat_hidden = hidden.reshape({b * t, hidden.size(2)});
  const at::Tensor flat_targets = targets.reshape({b * t}).to(hidden.device());
  std::vector<TokenScores> chunks;
  for (int64_t begin = 0; begin < b * t; begin += chunk_tokens) {
    const int64_t n = std::min(chunk_tokens, b * t - begin);
    at::Tensor logits = model.Logits(flat_hidden.narrow(0, begin, n));
    if (temperature != 1.0) logits = logits / temperature;
    const at::Tensor chunk_targets = flat_targets.narrow(0, begin, n);
#ifdef ROLLOUT_WITH_CUDA
    if (logits.is_cuda()) {
      chunks.push_back(FusedTokenScores(logits, chunk_targets));
      continue;
    }
#endif
    // Straight from the model dtype to a float32 result (no float32 copy of the
    // logits first).
    const at::Tensor log_softmax = logits.log_softmax(-1, at::kFloat);
    TokenScores chunk;
    chunk.log_probs = log_softmax.gather(-1, chunk_targets.unsqueeze(-1)).squeeze(-1);
    // H = -sum p log p, from the same log-softmax (stable for large logits).
    if (extras.entropy) chunk.entropy = -(log_softmax.exp() * log_softmax).sum(-1);
    if (extras.sum_pi_squared) {
      const c10::NoGradGuard no_grad;
      chunk.sum_pi_squared = (2 * log_softmax).exp().sum(-1);
    }
    chunks.push_back(std::move(chunk));
  }
  TokenScores scores = ConcatScores(chunks, extras, at::zeros({0}, hidden.options().dtype(at::kFloat)));
  for (at::Tensor* field : {&scores.log_probs, &scores.entropy, &scores.sum_pi_squared}) {
    if (field->defined()) *field = field->view({b, t});
  }
  return scores;
}

TokenScores ConcatScores(const std::vector<TokenScores>& parts, ScoreExtras extras, const at::Tensor& empty) {
  auto joined = [&](at::Tensor TokenScores::*field) {
    if (parts.empty()) return empty;
    std::vector<at::Tensor> tensors;
    for (const TokenScores& part : parts) tensors.push_back(part.*field);
    return at::cat(tensors);
  };
  TokenScores scores;
  scores.log_probs = joined(&TokenScores::log_probs);
  if (extras.entropy) scores.entropy = joined(&TokenScores::entropy);
  if (extras.sum_pi_squared) scores.sum_pi_squared = joined(&TokenScores::sum_pi_squared);
  return scores;
}

}  // namespace rollout::models
