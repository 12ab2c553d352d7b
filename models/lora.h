// LoRA adapters on a CausalLM, and their files in PEFT's format so HF peft loads
// them: <dir>/adapter_config.json and <dir>/adapter_model.safetensors with tensors
// "base_model.model.<module>.lora_A.weight" [r, in] and "...lora_B.weight" [out, r].
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "models/causal_lm.h"

namespace rollout::models {

struct LoraConfig {
  LoraOptions options;
  // Module names ("q_proj", "v_proj") or the single entry "all-linear" (every linear
  // layer but the LM head, as in PEFT).
  std::vector<std::string> target_modules = {"all-linear"};
  // A regular expression (ECMAScript) over whole module names
  // ("model.layers.0.self_attn.q_proj"): modules it matches get no adapter although
  // targeted, as PEFT's exclude_modules string. Empty: none excluded.
  std::string exclude_modules;
};

// Adds an adapter to every targeted linear layer that exclude_modules leaves.
// InvalidArgument for rank < 1, a model that already has adapters, a target module name
// that matches no layer (naming the ones that exist), an exclude_modules that is no
// regular expression, or one that excludes every targeted layer.
absl::Status AddLoraAdapters(CausalLM& model, const LoraConfig& config, uint64_t seed);

// The adapter tensors with their PEFT names; empty without adapters.
std::vector<std::pair<std::string, at::Tensor*>> NamedLoraParameters(CausalLM& model);

void MergeLora(CausalLM& model);
void UnmergeLora(CausalLM& model);

// `base_model_path` is recorded as base_model_name_or_path.
absl::Status SaveLoraAdapter(CausalLM& model, const LoraConfig& config, const std::string& dir,
                             const std::string& base_model_path);
// Reads a PEFT adapter directory into a model without adapters: adds adapters as the
// config says and loads their weights. NotFound / DataLoss / InvalidArgument naming
// the file and tensor; InvalidArgument naming the option for a PEFT option beyond plain
// LoRA (use_rslora, use_dora, a bias or lora_bias, modules_to_save, rank_pattern /
// alpha_pattern, layers_to_transform, layer_replication, target_parameters,
// trainable_token_indices). Returns the config read; PEFT's list form of exclude_modules
// (names matched whole or as the last parts of a module's name) becomes the equivalent
// regular expression.
absl::StatusOr<LoraConfig> LoadLoraAdapter(CausalLM& model, const std::string& dir);

}  // namespace rollout::models
