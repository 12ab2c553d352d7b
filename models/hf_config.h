// Hugging Face `config.json` of decoder-only causal LMs we run (Qwen2, Qwen3, Llama
// incl. Llama 3's RoPE scaling), and `generation_config.json`, read and written.
//
// Both config spellings are read: transformers 4 (`rope_theta`, `rope_scaling` at
// the top level) and transformers 5 (`rope_parameters: {rope_theta, rope_type, ...}`).
// Written files use the transformers 4 spelling, which both versions load.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rollout::models {

struct RopeScaling {
  std::string type = "default";  // "default" | "llama3"
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;
};

struct TransformerConfig {
  std::string model_type;  // "qwen2" | "qwen3" | "llama"
  // "causal_lm" (XForCausalLM) or "value": a token-classification model with one label
  // (XForTokenClassification), the critic's value model as verl builds it.
  std::string head = "causal_lm";
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 0;  // hidden_size / num_attention_heads unless given
  int64_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  bool attention_bias = false;  // q/k/v projections have biases (true for Qwen2)
  // Each head's query and key RMS-normalised (weights [head_dim]) before RoPE: Qwen3.
  bool qk_norm = false;
  bool mlp_bias = false;
  std::string hidden_act = "silu";
  std::string torch_dtype = "float32";  // "float32" | "bfloat16" | "float16"
  int64_t bos_token_id = -1;  // -1: none
  int64_t pad_token_id = -1;
  std::vector<int64_t> eos_token_ids;
};

// InvalidArgument naming `origin` and the key for: invalid JSON, unsupported model_type
// (supported: qwen2, qwen3, llama), missing or non-positive sizes (vocab, hidden, intermediate,
// layers, heads, max_position_embeddings), heads not dividing hidden size when no
// head_dim is given, kv heads not dividing heads, an unsupported activation (silu
// only), dtype (float32, bfloat16, float16) or rope type (default, llama3), llama3
// scaling missing a parameter, sliding window on. Absent optional keys take the HF
// defaults (num_key_value_heads = num_attention_heads, rope_theta 10000, eps 1e-6,
// float32); for qwen2 attention_bias is always true and mlp_bias false; qwen3 has
// qk_norm, no MLP bias and attention_bias as given (false when absent).
absl::StatusOr<TransformerConfig> ParseHfConfig(const std::string& json_text,
                                                const std::string& origin);
// Reads <dir>/config.json, then adds eos/bos/pad ids from <dir>/generation_config.json
// when that file exists: each id set there (not null) replaces config.json's (its
// eos_token_id may be a number or a list). NotFound without config.json.
absl::StatusOr<TransformerConfig> LoadHfConfig(const std::string& dir);

// config.json / generation_config.json text (transformers 4.46 spelling, sorted keys,
// 2-space indent) that HF transformers loads back to the same configuration
// (architectures: Qwen2ForCausalLM / Qwen3ForCausalLM / LlamaForCausalLM, or
// ...ForTokenClassification for a value model). ParseHfConfig(HfConfigJson(c))
// gives back every field of a `c` that ParseHfConfig could produce. The generation
// config holds only the token ids that are set.
std::string HfConfigJson(const TransformerConfig& config);
std::string HfGenerationConfigJson(const TransformerConfig& config);

}  // namespace rollout::models
