#include "models/presets.h"

#include "absl/strings/str_cat.h"

namespace rollout::models {

absl::StatusOr<TransformerConfig> PresetConfig(const std::string& name, int64_t vocab_size) {
  TransformerConfig c;
  c.model_type = "qwen2";
  c.attention_bias = true;
  c.tie_word_embeddings = true;
  c.rms_norm_eps = 1e-6;
  c.vocab_size = vocab_size;
  if (name == "tiny") {
    c.hidden_size = 64;
    c.intermediate_size = 160;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 4;
    c.num_key_value_heads = 2;
    c.max_position_embeddings = 2048;
    c.rope_theta = 10000.0;
  } else if (name == "qwen2.5-0.5b") {
    c.hidden_size = 896;
    c.intermediate_size = 4864;
    c.num_hidden_layers = 24;
    c.num_attention_heads = 14;
    c.num_key_value_heads = 2;
    c.max_position_embeddings = 32768;
    c.rope_theta = 1000000.0;
  } else if (name == "qwen3-0.6b") {
    c.model_type = "qwen3";
    c.attention_bias = false;
    c.qk_norm = true;
    c.hidden_size = 1024;
    c.intermediate_size = 3072;
    c.num_hidden_layers = 28;
    c.num_attention_heads = 16;
    c.num_key_value_heads = 8;
    c.head_dim = 128;
    c.max_position_embeddings = 40960;
    c.rope_theta = 1000000.0;
    return c;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown model preset '", name,
                                                   "' (known: tiny, qwen2.5-0.5b, qwen3-0.6b)"));
  }
  c.head_dim = c.hidden_size / c.num_attention_heads;
  return c;
}

absl::StatusOr<TransformerConfig> PresetConfig(const std::string& name) {
  return PresetConfig(name, name == "tiny" ? 514 : 151936);
}

}  // namespace rollout::models
