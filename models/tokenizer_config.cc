#include "models/tokenizer_config.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace rollout::models {
namespace {

using nlohmann::json;

// The file's text, nullopt when it does not exist.
absl::StatusOr<std::optional<std::string>> ReadOptional(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (absl::IsNotFound(text.status())) return std::optional<std::string>();
  if (!text.ok()) return text.status();
  return std::optional<std::string>(*std::move(text));
}

absl::StatusOr<std::optional<json>> ReadJsonObject(const std::string& path) {
  ASSIGN_OR_RETURN(std::optional<std::string> text, ReadOptional(path));
  if (!text) return std::optional<json>();
  json root = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a JSON object"));
  }
  return std::optional<json>(std::move(root));
}

std::optional<std::string> TokenText(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content")) return value.at("content").get<std::string>();
  return std::nullopt;
}

absl::StatusOr<std::string> PickTemplate(const json& chat_template) {
  if (chat_template.is_string()) return chat_template.get<std::string>();
  if (chat_template.is_array()) {
    for (const json& entry : chat_template) {
      if (entry.value("name", "") == "default" || chat_template.size() == 1) {
        return entry.at("template").get<std::string>();
      }
    }
    return absl::InvalidArgumentError("chat_template lists no template named 'default'");
  }
  return absl::InvalidArgumentError("chat_template is neither a string nor a list");
}

absl::Status ReadTokenizerConfig(const json& config, TokenizerConfigFiles* files) {
  files->eos_token = TokenText(config.value("eos_token", json()));
  files->pad_token = TokenText(config.value("pad_token", json()));
  files->bos_token = TokenText(config.value("bos_token", json()));
  files->pad_key_present = config.contains("pad_token");
  files->bos_key_present = config.contains("bos_token");
  if (config.contains("chat_template") && !config.at("chat_template").is_null()) {
    ASSIGN_OR_RETURN(files->chat_template, PickTemplate(config.at("chat_template")));
  }
  return absl::OkStatus();
}

absl::Status ReadGenerationConfig(const json& config, TokenizerConfigFiles* files) {
  const json eos = config.value("eos_token_id", json());
  if (eos.is_array()) {
    for (const json& id : eos) files->generation_eos_ids.push_back(id.get<int32_t>());
  } else if (!eos.is_null()) {
    files->generation_eos_ids.push_back(eos.get<int32_t>());
  }
  if (config.contains("pad_token_id") && !config.at("pad_token_id").is_null()) {
    files->generation_pad_id = config.at("pad_token_id").get<int32_t>();
  }
  if (config.contains("bos_token_id") && !config.at("bos_token_id").is_null()) {
    files->generation_bos_id = config.at("bos_token_id").get<int32_t>();
  }
  return absl::OkStatus();
}

// Runs `read`, turning JSON type errors into InvalidArgument; messages name `path`.
template <typename Read>
absl::Status Guarded(const std::string& path, Read read) {
  try {
    return WithContext(read(), path);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", e.what()));
  }
}

}  // namespace

absl::StatusOr<TokenizerConfigFiles> ReadTokenizerConfigFiles(const std::string& dir) {
  TokenizerConfigFiles files;
  const std::string config_path = JoinPath(dir, "tokenizer_config.json");
  const std::string generation_path = JoinPath(dir, "generation_config.json");
  const std::string jinja_path = JoinPath(dir, "chat_template.jinja");
  ASSIGN_OR_RETURN(std::optional<json> config, ReadJsonObject(config_path));
  ASSIGN_OR_RETURN(std::optional<json> generation, ReadJsonObject(generation_path));
  ASSIGN_OR_RETURN(std::optional<std::string> jinja, ReadOptional(jinja_path));
  if (config) {
    RETURN_IF_ERROR(Guarded(config_path, [&] { return ReadTokenizerConfig(*config, &files); }));
    if (files.chat_template) files.chat_template_origin = config_path;
  }
  if (generation) {
    RETURN_IF_ERROR(
        Guarded(generation_path, [&] { return ReadGenerationConfig(*generation, &files); }));
  }
  if (jinja) {
    files.chat_template = std::move(jinja);
    files.chat_template_origin = jinja_path;
  }
  return files;
}

}  // namespace rollout::models
