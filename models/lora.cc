#include "models/lora.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <ATen/CPUGeneratorImpl.h>

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "models/safetensors.h"

namespace rollout::models {
namespace {

constexpr char kPeftPrefix[] = "base_model.model.";

// "model.layers.0.self_attn.q_proj" -> "q_proj"
std::string ShortName(const std::string& module) {
  return module.substr(module.find_last_of('.') + 1);
}

bool Targeted(const LoraConfig& config, const std::string& module) {
  for (const std::string& target : config.target_modules) {
    if (target == "all-linear" || target == ShortName(module)) return true;
  }
  return false;
}

absl::StatusOr<std::regex> ExcludePattern(const std::string& pattern) {
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& error) {
    return absl::InvalidArgumentError(
        absl::StrCat("LoRA exclude_modules '", pattern, "' is not a regular expression: ", error.what()));
  }
}

// PEFT's list form: a module is excluded when its name is one of `names` or ends with
// "." and one of them.
std::string ListAsPattern(const std::vector<std::string>& names) {
  std::vector<std::string> escaped;
  for (const std::string& name : names) {
    std::string text;
    for (char c : name) {
      if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) text += '\\';
      text += c;
    }
    escaped.push_back(std::move(text));
  }
  return absl::StrCat("(.*\\.)?(", absl::StrJoin(escaped, "|"), ")");
}

// The first PEFT option in an adapter's config that changes what the adapter computes
// beyond plain LoRA (W + alpha / r B A on the targeted linear layers), described; empty
// when there is none.
std::string UnsupportedPeftOption(const nlohmann::json& json) {
  const auto set = [&json](const char* key) {
    const auto it = json.find(key);
    return it != json.end() && !it->is_null() && *it != false && !(it->is_structured() && it->empty());
  };
  if (set("use_rslora")) return "use_rslora (rank-stabilised scaling, alpha / sqrt(r))";
  if (set("use_dora")) return "use_dora (weight-decomposed LoRA)";
  if (json.contains("bias") && json.at("bias") != "none") return "a trained bias (bias " + json.at("bias").dump() + ")";
  if (set("modules_to_save")) return "modules_to_save (whole modules trained beside the adapters)";
  if (set("rank_pattern") || set("alpha_pattern")) return "a rank or alpha per module (rank_pattern, alpha_pattern)";
  if (set("layers_to_transform")) return "layers_to_transform (adapters on some layers only)";
  if (set("lora_bias")) return "lora_bias (a trained bias on lora_B)";
  if (set("layer_replication")) return "layer_replication (layers repeated to widen the model)";
  if (set("target_parameters")) return "target_parameters (adapters on parameters, not linear layers)";
  if (set("trainable_token_indices")) return "trainable_token_indices (trained rows of the embeddings)";
  return "";
}

}  // namespace

absl::Status AddLoraAdapters(CausalLM& model, const LoraConfig& config, uint64_t seed) {
  if (config.options.rank < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("LoRA rank must be at least 1, got ", config.options.rank));
  }
  std::set<std::string> names;
  for (const auto& [module, linear] : model.NamedLinears()) {
    if (linear->has_adapter()) {
      return absl::FailedPreconditionError("the model already has LoRA adapters");
    }
    names.insert(ShortName(module));
  }
  for (const std::string& target : config.target_modules) {
    if (target != "all-linear" && names.count(target) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "LoRA target module '", target, "' matches no layer; layers are: ",
          absl::StrJoin(names, ", "), " (or all-linear)"));
    }
  }
  std::optional<std::regex> exclude;
  if (!config.exclude_modules.empty()) {
    ASSIGN_OR_RETURN(exclude, ExcludePattern(config.exclude_modules));
  }
  std::vector<Linear*> adapted;
  for (auto& [module, linear] : model.NamedLinears()) {
    if (Targeted(config, module) && !(exclude && std::regex_match(module, *exclude))) adapted.push_back(linear);
  }
  if (adapted.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("LoRA exclude_modules '", config.exclude_modules,
                                                   "' excludes every module target_modules names"));
  }
  at::Generator generator = at::detail::createCPUGenerator(seed);
  for (Linear* linear : adapted) linear->AddAdapter(config.options, generator);
  return absl::OkStatus();
}

std::vector<std::pair<std::string, at::Tensor*>> NamedLoraParameters(CausalLM& model) {
  std::vector<std::pair<std::string, at::Tensor*>> out;
  for (auto& [module, linear] : model.NamedLinears()) {
    if (!linear->has_adapter()) continue;
    out.emplace_back(absl::StrCat(kPeftPrefix, module, ".lora_A.weight"), &linear->lora_a());
    out.emplace_back(absl::StrCat(kPeftPrefix, module, ".lora_B.weight"), &linear->lora_b());
  }
  return out;
}

void MergeLora(CausalLM& model) {
  for (auto& [module, linear] : model.NamedLinears()) linear->Merge();
}

void UnmergeLora(CausalLM& model) {
  for (auto& [module, linear] : model.NamedLinears()) linear->Unmerge();
}

absl::Status SaveLoraAdapter(CausalLM& model, const LoraConfig& config, const std::string& dir,
                             const std::string& base_model_path) {
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& [name, tensor] : NamedLoraParameters(model)) tensors.emplace_back(name, *tensor);
  if (tensors.empty()) return absl::FailedPreconditionError("the model has no LoRA adapters");
  nlohmann::json json = {
      {"peft_type", "LORA"},
      {"task_type", "CAUSAL_LM"},
      {"base_model_name_or_path", base_model_path},
      {"r", config.options.rank},
      {"lora_alpha", config.options.alpha},
      {"lora_dropout", config.options.dropout},
      {"target_modules", config.target_modules.size() == 1 && config.target_modules[0] == "all-linear"
                             ? nlohmann::json("all-linear")
                             : nlohmann::json(config.target_modules)},
      {"bias", "none"},
      {"fan_in_fan_out", false},
      {"inference_mode", true},
      {"init_lora_weights", true},
      {"exclude_modules", config.exclude_modules.empty() ? nlohmann::json(nullptr)
                                                          : nlohmann::json(config.exclude_modules)},
      {"modules_to_save", nullptr},
      {"use_rslora", false},
      {"use_dora", false},
  };
  RETURN_IF_ERROR(MakeDirectories(dir));
  RETURN_IF_ERROR(WriteSafetensors(JoinPath(dir, "adapter_model.safetensors"), tensors,
                                   {{"format", "pt"}}));
  return WriteFileAtomically(JoinPath(dir, "adapter_config.json"), json.dump(2) + "\n");
}

absl::StatusOr<LoraConfig> LoadLoraAdapter(CausalLM& model, const std::string& dir) {
  const std::string config_path = JoinPath(dir, "adapter_config.json");
  ASSIGN_OR_RETURN(std::string text, ReadFile(config_path));
  LoraConfig config;
  try {
    const nlohmann::json json = nlohmann::json::parse(text);
    const std::string unsupported = UnsupportedPeftOption(json);
    if (!unsupported.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(config_path, ": ", unsupported, " is not implemented here"));
    }
    config.options.rank = json.at("r").get<int64_t>();
    config.options.alpha = json.at("lora_alpha").get<double>();
    config.options.dropout = json.value("lora_dropout", 0.0);
    const nlohmann::json& targets = json.at("target_modules");
    config.target_modules = targets.is_string()
                                ? std::vector<std::string>{targets.get<std::string>()}
                                : targets.get<std::vector<std::string>>();
    const nlohmann::json exclude = json.value("exclude_modules", nlohmann::json(nullptr));
    if (exclude.is_string()) config.exclude_modules = exclude.get<std::string>();
    if (exclude.is_array() && !exclude.empty()) config.exclude_modules = ListAsPattern(exclude.get<std::vector<std::string>>());
  } catch (const nlohmann::json::exception& error) {
    return absl::InvalidArgumentError(absl::StrCat(config_path, ": ", error.what()));
  }
  RETURN_IF_ERROR(WithContext(AddLoraAdapters(model, config, /*seed=*/0), config_path));
  const std::string weights_path = JoinPath(dir, "adapter_model.safetensors");
  ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsReader> reader,
                   SafetensorsReader::OpenFile(weights_path));
  for (auto& [name, tensor] : NamedLoraParameters(model)) {
    if (!reader->Has(name)) {
      return absl::NotFoundError(absl::StrCat(weights_path, " has no tensor ", name));
    }
    ASSIGN_OR_RETURN(at::Tensor loaded, reader->Load(name));
    if (loaded.sizes() != tensor->sizes()) {
      return absl::DataLossError(absl::StrCat(weights_path, ": tensor ", name,
                                              " does not match the model's layer shape"));
    }
    c10::NoGradGuard no_grad;
    tensor->copy_(loaded);
  }
  return config;
}

}  // namespace rollout::models
