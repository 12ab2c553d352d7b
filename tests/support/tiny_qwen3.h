// A random tiny Qwen3 for tests: the "tiny" preset's shape as Qwen3 lays it out (no
// q/k/v bias, per-head query/key RMSNorm), with the q/k norm weights drawn away from 1
// so that a path that skipped them would show.
#pragma once

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <memory>
#include <string>

#include "models/causal_lm.h"
#include "models/presets.h"

namespace rollout::testing {

// Heads of `head_dim` (the tiny preset's hidden size is 64 over 4 heads).
inline models::TransformerConfig TinyQwen3Config(int64_t vocab_size, int64_t head_dim) {
  models::TransformerConfig c = models::PresetConfig("tiny", vocab_size).value();
  c.model_type = "qwen3";
  c.attention_bias = false;
  c.qk_norm = true;
  c.head_dim = head_dim;
  return c;
}

// RandomInit, then each q_norm / k_norm weight uniform in [0.5, 1.5), from `seed`.
inline std::unique_ptr<models::CausalLM> RandomQwen3(const models::TransformerConfig& config,
                                                     uint64_t seed,
                                                     const models::LoadOptions& options) {
  std::unique_ptr<models::CausalLM> model = models::CausalLM::RandomInit(config, seed, options);
  c10::NoGradGuard no_grad;
  at::manual_seed(seed);
  for (auto& [name, tensor] : model->NamedParameters()) {
    if (name.find("self_attn.q_norm.") != std::string::npos ||
        name.find("self_attn.k_norm.") != std::string::npos) {
      tensor->uniform_(0.5, 1.5);
    }
  }
  return model;
}

}  // namespace rollout::testing
