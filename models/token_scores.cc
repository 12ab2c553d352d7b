#include "models/token_scores.h"

#include <ATen/ATen.h>

#ifdef ROLLOUT_WITH_CUDA
#include "models/fused_token_scores.h"
#endif

namespace rollout::models {

TokenScores ScoreTokens(const CausalLM& model, const at::Tensor& hidden, const at::Tensor& targets,
                        bool with_entropy, double temperature, int64_t chunk_tokens) {
  const int64_t b = hidden.size(0);
  const int64_t t = hidden.size(1);
  const at::Tensor flat_hidden = hidden.reshape({b * t, hidden.size(2)});
  const at::Tensor flat_targets = targets.reshape({b * t}).to(hidden.device());
  TokenScores scores;
  if (b * t == 0) {
    scores.log_probs = at::zeros({b, t}, hidden.options().dtype(at::kFloat));
    if (with_entropy) scores.entropy = at::zeros({b, t}, hidden.options().dtype(at::kFloat));
    return scores;
  }
  std::vector<at::Tensor> log_probs;
  std::vector<at::Tensor> entropies;
  for (int64_t begin = 0; begin < b * t; begin += chunk_tokens) {
    const int64_t n = std::min(chunk_tokens, b * t - begin);
    at::Tensor logits = model.Logits(flat_hidden.narrow(0, begin, n));
    if (temperature != 1.0) logits = logits / temperature;
    const at::Tensor chunk_targets = flat_targets.narrow(0, begin, n);
#ifdef ROLLOUT_WITH_CUDA
    if (logits.is_cuda()) {
      auto [log_prob, entropy] = FusedTokenScores(logits, chunk_targets);
      log_probs.push_back(log_prob);
      if (with_entropy) entropies.push_back(entropy);
      continue;
    }
#endif
    // Straight from the model dtype to a float32 result (no float32 copy of the
    // logits first).
    const at::Tensor log_softmax = logits.log_softmax(-1, at::kFloat);
    log_probs.push_back(log_softmax.gather(-1, chunk_targets.unsqueeze(-1)).squeeze(-1));
    if (with_entropy) {
      // H = -sum p log p, from the same log-softmax (stable for large logits).
      entropies.push_back(-(log_softmax.exp() * log_softmax).sum(-1));
    }
  }
  scores.log_probs = at::cat(log_probs).view({b, t});
  if (with_entropy) scores.entropy = at::cat(entropies).view({b, t});
  return scores;
}

}  // namespace rollout::models
