// Named model shapes for `rollout init-model` and the benchmarks.
//   tiny           the test fixture's shape: hidden 64, 2 layers, 4 heads / 2 KV heads,
//                  intermediate 160, tied embeddings, q/k/v bias (Qwen2)
//   qwen2.5-0.5b   hidden 896, 24 layers, 14 heads / 2 KV heads, intermediate 4864,
//                  tied embeddings, rope_theta 1e6 (Qwen2)
//   qwen3-0.6b     hidden 1024, 28 layers, 16 heads / 8 KV heads of 128, intermediate
//                  3072, per-head q/k RMSNorm, no biases, tied embeddings, rope_theta
//                  1e6, 40,960 positions (Qwen3)
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "models/hf_config.h"

namespace rollout::models {

// `vocab_size` comes from the tokenizer the model is made for. InvalidArgument for an
// unknown name (listing the known ones).
absl::StatusOr<TransformerConfig> PresetConfig(const std::string& name, int64_t vocab_size);

// With the vocabulary of the tokenizer the shape goes with (tiny: the test fixture's
// 514 entries; the others: Qwen's 151,936), for benchmarks that need no tokenizer.
absl::StatusOr<TransformerConfig> PresetConfig(const std::string& name);

}  // namespace rollout::models
