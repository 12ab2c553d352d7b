// Test fixtures for the policy roles: a tiny random Qwen2-shaped model on CPU and
// batches in verl's layout.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "models/causal_lm.h"
#include "models/presets.h"
#include "workers/policy_batch.h"

namespace rollout::workers::testing {

inline constexpr int64_t kVocab = 64;
inline constexpr int64_t kPrompt = 4;
inline constexpr int64_t kResponse = 3;

inline std::unique_ptr<models::CausalLM> TinyModel(uint64_t seed = 7) {
  models::TransformerConfig config = models::PresetConfig("tiny", kVocab).value();
  config.pad_token_id = 0;
  return models::CausalLM::RandomInit(config, seed, models::LoadOptions());
}

inline std::vector<at::Tensor*> AllParameters(models::CausalLM& model) {
  std::vector<at::Tensor*> params;
  for (auto& [name, param] : model.NamedParameters()) params.push_back(param);
  return params;
}

// `rows` random sequences (seeded by `seed`); with `pad`, row r has r % 3 tokens of left
// padding in its prompt and r % 2 of right padding in its response (so every row keeps
// at least 2 response tokens). Advantages rise linearly from -1 (row 0) to 1.
inline PolicyBatch MakeBatch(int64_t rows, bool pad = true, uint64_t seed = 11) {
  at::manual_seed(seed);
  PolicyBatch batch;
  const at::TensorOptions ints = at::TensorOptions().dtype(at::kLong);
  batch.input_ids = at::randint(1, kVocab, {rows, kPrompt + kResponse}, ints);
  batch.attention_mask = at::ones({rows, kPrompt + kResponse}, ints);
  batch.response_mask = at::ones({rows, kResponse}, ints);
  for (int64_t r = 0; pad && r < rows; ++r) {
    for (int64_t c = 0; c < r % 3; ++c) batch.attention_mask[r][c] = 0;
    if (r % 2 == 1) {
      batch.attention_mask[r][kPrompt + kResponse - 1] = 0;
      batch.response_mask[r][kResponse - 1] = 0;
    }
  }
  batch.input_ids.masked_fill_(batch.attention_mask == 0, 0);
  batch.position_ids = (batch.attention_mask.cumsum(1) - 1).clamp_min(0);
  batch.responses = batch.input_ids.narrow(1, kPrompt, kResponse).clone();
  batch.advantages = at::linspace(-1, 1, rows).unsqueeze(1).expand({rows, kResponse}).contiguous();
  return batch;
}

}  // namespace rollout::workers::testing
