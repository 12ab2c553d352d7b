#include "models/hf_config.h"

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace rollout::models {
namespace {

using Json = nlohmann::json;

constexpr char kTransformersVersion[] = "4.46.0";

absl::StatusOr<Json> ParseJsonObject(const std::string& text, const std::string& origin) {
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": not valid JSON: ", e.what()));
  }
  if (!json.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": not a JSON object"));
  }
  return json;
}

// Typed access to one JSON object; errors name `origin` and the key (with `prefix`,
// e.g. "rope_scaling."). Optional getters leave the output alone when the key is
// absent or null.
class Fields {
 public:
  Fields(const Json& json, std::string origin, std::string prefix = "")
      : json_(json), origin_(std::move(origin)), prefix_(std::move(prefix)) {}

  bool Present(const char* key) const { return json_.contains(key) && !json_[key].is_null(); }
  absl::Status Error(const char* key, absl::string_view problem) const {
    return absl::InvalidArgumentError(absl::StrCat(origin_, ": ", prefix_, key, " ", problem));
  }

  absl::Status RequiredPositive(const char* key, int64_t* out) const {
    if (!Present(key)) return Error(key, "is required");
    return OptionalPositive(key, out);
  }
  absl::Status OptionalPositive(const char* key, int64_t* out) const {
    if (!Present(key)) return absl::OkStatus();
    if (!json_[key].is_number_integer() || json_[key].get<int64_t>() <= 0) {
      return Error(key, "must be a positive integer");
    }
    *out = json_[key].get<int64_t>();
    return absl::OkStatus();
  }
  absl::Status RequiredPositive(const char* key, double* out) const {
    if (!Present(key)) return Error(key, "is required");
    return OptionalPositive(key, out);
  }
  absl::Status OptionalPositive(const char* key, double* out) const {
    if (!Present(key)) return absl::OkStatus();
    if (!json_[key].is_number() || json_[key].get<double>() <= 0) {
      return Error(key, "must be a positive number");
    }
    *out = json_[key].get<double>();
    return absl::OkStatus();
  }
  absl::Status Optional(const char* key, bool* out) const {
    if (!Present(key)) return absl::OkStatus();
    if (!json_[key].is_boolean()) return Error(key, "must be true or false");
    *out = json_[key].get<bool>();
    return absl::OkStatus();
  }
  absl::Status Optional(const char* key, std::string* out) const {
    if (!Present(key)) return absl::OkStatus();
    if (!json_[key].is_string()) return Error(key, "must be a string");
    *out = json_[key].get<std::string>();
    return absl::OkStatus();
  }
  // A token id; null means none (-1).
  absl::Status TokenId(const char* key, int64_t* out) const {
    if (!json_.contains(key)) return absl::OkStatus();
    if (json_[key].is_null()) {
      *out = -1;
      return absl::OkStatus();
    }
    if (!json_[key].is_number_unsigned()) return Error(key, "must be a token id or null");
    *out = json_[key].get<int64_t>();
    return absl::OkStatus();
  }
  // A token id or a list of them; null means none.
  absl::Status TokenIds(const char* key, std::vector<int64_t>* out) const {
    if (!json_.contains(key)) return absl::OkStatus();
    const Json& value = json_[key];
    std::vector<int64_t> ids;
    const Json list = value.is_null()    ? Json::array()
                      : value.is_array() ? value
                                         : Json::array({value});
    for (const Json& id : list) {
      if (!id.is_number_unsigned()) return Error(key, "must be a token id, a list of them or null");
      ids.push_back(id.get<int64_t>());
    }
    *out = std::move(ids);
    return absl::OkStatus();
  }

 private:
  const Json& json_;
  std::string origin_;
  std::string prefix_;
};

absl::Status ParseSizes(const Fields& fields, TransformerConfig& c) {
  RETURN_IF_ERROR(fields.RequiredPositive("vocab_size", &c.vocab_size));
  RETURN_IF_ERROR(fields.RequiredPositive("hidden_size", &c.hidden_size));
  RETURN_IF_ERROR(fields.RequiredPositive("intermediate_size", &c.intermediate_size));
  RETURN_IF_ERROR(fields.RequiredPositive("num_hidden_layers", &c.num_hidden_layers));
  RETURN_IF_ERROR(fields.RequiredPositive("num_attention_heads", &c.num_attention_heads));
  RETURN_IF_ERROR(fields.RequiredPositive("max_position_embeddings", &c.max_position_embeddings));
  c.num_key_value_heads = c.num_attention_heads;
  RETURN_IF_ERROR(fields.OptionalPositive("num_key_value_heads", &c.num_key_value_heads));
  if (c.num_attention_heads % c.num_key_value_heads != 0) {
    return fields.Error("num_key_value_heads",
                        absl::StrCat(c.num_key_value_heads, " does not divide num_attention_heads ",
                                     c.num_attention_heads));
  }
  if (fields.Present("head_dim")) return fields.OptionalPositive("head_dim", &c.head_dim);
  if (c.hidden_size % c.num_attention_heads != 0) {
    return fields.Error("num_attention_heads",
                        absl::StrCat(c.num_attention_heads, " does not divide hidden_size ",
                                     c.hidden_size, " (and no head_dim is given)"));
  }
  c.head_dim = c.hidden_size / c.num_attention_heads;
  return absl::OkStatus();
}

// transformers 5 keeps theta and scaling in `rope_parameters`; transformers 4 has
// `rope_theta` and `rope_scaling` (null for plain RoPE) at the top level.
absl::Status ParseRope(const Json& json, const std::string& origin, TransformerConfig& c) {
  const Fields top(json, origin);
  const bool v5 = top.Present("rope_parameters");
  const char* key = v5 ? "rope_parameters" : "rope_scaling";
  RETURN_IF_ERROR(top.OptionalPositive("rope_theta", &c.rope_theta));
  if (!top.Present(key)) return absl::OkStatus();
  if (!json[key].is_object()) return top.Error(key, "must be an object or null");
  const Fields rope(json[key], origin, absl::StrCat(key, "."));
  if (v5) RETURN_IF_ERROR(rope.OptionalPositive("rope_theta", &c.rope_theta));
  std::string type = "default";
  RETURN_IF_ERROR(rope.Optional("type", &type));
  RETURN_IF_ERROR(rope.Optional("rope_type", &type));
  if (type == "default") return absl::OkStatus();
  if (type != "llama3") {
    return rope.Error("rope_type", absl::StrCat("'", type, "' is not supported (default, llama3)"));
  }
  RopeScaling& s = c.rope_scaling;
  s.type = type;
  RETURN_IF_ERROR(rope.RequiredPositive("factor", &s.factor));
  RETURN_IF_ERROR(rope.RequiredPositive("low_freq_factor", &s.low_freq_factor));
  RETURN_IF_ERROR(rope.RequiredPositive("high_freq_factor", &s.high_freq_factor));
  RETURN_IF_ERROR(rope.RequiredPositive("original_max_position_embeddings",
                                        &s.original_max_position_embeddings));
  if (s.low_freq_factor >= s.high_freq_factor) {
    return rope.Error("low_freq_factor", "must be below high_freq_factor");
  }
  return absl::OkStatus();
}

absl::Status RefuseSlidingWindow(const Fields& fields) {
  bool sliding = false;
  RETURN_IF_ERROR(fields.Optional("use_sliding_window", &sliding));
  if (sliding) return fields.Error("use_sliding_window", "true is not supported");
  return absl::OkStatus();
}

absl::Status ParseModelSpecific(const Fields& fields, TransformerConfig& c) {
  if (c.model_type == "qwen2") {
    c.attention_bias = true;
    return RefuseSlidingWindow(fields);
  }
  RETURN_IF_ERROR(fields.Optional("attention_bias", &c.attention_bias));
  if (c.model_type == "qwen3") {
    c.qk_norm = true;
    return RefuseSlidingWindow(fields);
  }
  return fields.Optional("mlp_bias", &c.mlp_bias);
}

absl::Status ParseDtypeAndActivation(const Fields& fields, TransformerConfig& c) {
  // transformers >= 4.56 and 5 write `dtype`; older ones `torch_dtype`.
  const char* dtype_key = fields.Present("dtype") ? "dtype" : "torch_dtype";
  RETURN_IF_ERROR(fields.Optional(dtype_key, &c.torch_dtype));
  if (c.torch_dtype != "float32" && c.torch_dtype != "bfloat16" && c.torch_dtype != "float16") {
    return fields.Error(dtype_key, absl::StrCat("'", c.torch_dtype,
                                                "' is not supported (float32, bfloat16, float16)"));
  }
  RETURN_IF_ERROR(fields.Optional("hidden_act", &c.hidden_act));
  if (c.hidden_act != "silu") {
    return fields.Error("hidden_act", absl::StrCat("'", c.hidden_act, "' is not supported (silu)"));
  }
  return absl::OkStatus();
}

// Fills ids that `fields` sets (non-null); others are left alone.
absl::Status OverrideTokenIds(const Fields& fields, TransformerConfig& c) {
  if (fields.Present("bos_token_id"))
    RETURN_IF_ERROR(fields.TokenId("bos_token_id", &c.bos_token_id));
  if (fields.Present("pad_token_id"))
    RETURN_IF_ERROR(fields.TokenId("pad_token_id", &c.pad_token_id));
  if (fields.Present("eos_token_id")) {
    RETURN_IF_ERROR(fields.TokenIds("eos_token_id", &c.eos_token_ids));
  }
  return absl::OkStatus();
}

Json TokenIdJson(int64_t id) { return id < 0 ? Json(nullptr) : Json(id); }

Json EosJson(const std::vector<int64_t>& ids) {
  if (ids.empty()) return nullptr;
  if (ids.size() == 1) return ids[0];
  return ids;
}

// `architectures: [XForTokenClassification]` (a saved value model) or
// `[XForSequenceClassification]` (a reward model, whose `score` head is the same linear
// map read at the last token) with one label makes a value model.
absl::Status ParseHead(const Json& json, const Fields& fields, TransformerConfig& c) {
  const auto architectures = json.find("architectures");
  if (architectures == json.end() || !architectures->is_array()) return absl::OkStatus();
  for (const Json& name : *architectures) {
    if (!name.is_string() || !(absl::EndsWith(name.get<std::string>(), "ForTokenClassification") ||
                               absl::EndsWith(name.get<std::string>(), "ForSequenceClassification"))) {
      continue;
    }
    const auto labels = json.find("id2label");
    if (labels != json.end() && labels->is_object() && labels->size() != 1) {
      return fields.Error("id2label", "must have exactly one label for a value model");
    }
    c.head = "value";
  }
  return absl::OkStatus();
}

// "Qwen2", "Qwen3" or "Llama": the prefix of the model's HF class names.
std::string ArchitecturePrefix(const std::string& model_type) {
  if (model_type == "qwen2") return "Qwen2";
  if (model_type == "qwen3") return "Qwen3";
  return "Llama";
}

}  // namespace


absl::StatusOr<TransformerConfig> ParseHfConfig(const std::string& json_text,
                                                const std::string& origin) {
  ASSIGN_OR_RETURN(const Json json, ParseJsonObject(json_text, origin));
  const Fields fields(json, origin);
  TransformerConfig c;
  if (!fields.Present("model_type")) return fields.Error("model_type", "is required");
  RETURN_IF_ERROR(fields.Optional("model_type", &c.model_type));
  if (c.model_type != "qwen2" && c.model_type != "qwen3" && c.model_type != "llama") {
    return fields.Error("model_type",
                        absl::StrCat("'", c.model_type, "' is not supported (qwen2, qwen3, llama)"));
  }
  RETURN_IF_ERROR(ParseSizes(fields, c));
  RETURN_IF_ERROR(fields.OptionalPositive("rms_norm_eps", &c.rms_norm_eps));
  RETURN_IF_ERROR(ParseRope(json, origin, c));
  RETURN_IF_ERROR(fields.Optional("tie_word_embeddings", &c.tie_word_embeddings));
  RETURN_IF_ERROR(ParseModelSpecific(fields, c));
  RETURN_IF_ERROR(ParseDtypeAndActivation(fields, c));
  RETURN_IF_ERROR(fields.TokenId("bos_token_id", &c.bos_token_id));
  RETURN_IF_ERROR(fields.TokenId("pad_token_id", &c.pad_token_id));
  RETURN_IF_ERROR(fields.TokenIds("eos_token_id", &c.eos_token_ids));
  RETURN_IF_ERROR(ParseHead(json, fields, c));
  return c;
}

absl::StatusOr<TransformerConfig> LoadHfConfig(const std::string& dir) {
  const std::string config_path = JoinPath(dir, "config.json");
  ASSIGN_OR_RETURN(const std::string config_text, ReadFile(config_path));
  ASSIGN_OR_RETURN(TransformerConfig config, ParseHfConfig(config_text, config_path));
  const std::string generation_path = JoinPath(dir, "generation_config.json");
  absl::StatusOr<std::string> generation_text = ReadFile(generation_path);
  if (absl::IsNotFound(generation_text.status())) return config;
  if (!generation_text.ok()) return generation_text.status();
  ASSIGN_OR_RETURN(const Json generation, ParseJsonObject(*generation_text, generation_path));
  RETURN_IF_ERROR(OverrideTokenIds(Fields(generation, generation_path), config));
  return config;
}

std::string HfConfigJson(const TransformerConfig& c) {
  const std::string suffix = c.head == "value" ? "ForTokenClassification" : "ForCausalLM";
  Json json = {
      {"architectures", Json::array({ArchitecturePrefix(c.model_type) + suffix})},
      {"model_type", c.model_type},
      {"vocab_size", c.vocab_size},
      {"hidden_size", c.hidden_size},
      {"intermediate_size", c.intermediate_size},
      {"num_hidden_layers", c.num_hidden_layers},
      {"num_attention_heads", c.num_attention_heads},
      {"num_key_value_heads", c.num_key_value_heads},
      {"head_dim", c.head_dim},
      {"max_position_embeddings", c.max_position_embeddings},
      {"rms_norm_eps", c.rms_norm_eps},
      {"rope_theta", c.rope_theta},
      {"rope_scaling", nullptr},
      {"tie_word_embeddings", c.tie_word_embeddings},
      {"torch_dtype", c.torch_dtype},
      {"hidden_act", c.hidden_act},
      {"bos_token_id", TokenIdJson(c.bos_token_id)},
      {"eos_token_id", EosJson(c.eos_token_ids)},
      {"pad_token_id", TokenIdJson(c.pad_token_id)},
      {"attention_dropout", 0.0},
      {"transformers_version", kTransformersVersion},
      {"use_cache", true},
  };
  if (c.head == "value") {
    json["id2label"] = {{"0", "LABEL_0"}};
    json["label2id"] = {{"LABEL_0", 0}};
  }
  if (c.rope_scaling.type != "default") {
    const RopeScaling& s = c.rope_scaling;
    json["rope_scaling"] = {
        {"rope_type", s.type},
        {"factor", s.factor},
        {"low_freq_factor", s.low_freq_factor},
        {"high_freq_factor", s.high_freq_factor},
        {"original_max_position_embeddings", s.original_max_position_embeddings}};
  }
  if (c.model_type == "qwen2" || c.model_type == "qwen3") {
    // Qwen2 always has q/k/v biases, Qwen3 as attention_bias says; neither has an MLP
    // bias, and the window is off on every layer.
    json["use_sliding_window"] = false;
    json["sliding_window"] = nullptr;
    json["max_window_layers"] = c.num_hidden_layers;
  }
  if (c.model_type != "qwen2") json["attention_bias"] = c.attention_bias;
  if (c.model_type == "llama") json["mlp_bias"] = c.mlp_bias;
  return json.dump(2) + "\n";
}

std::string HfGenerationConfigJson(const TransformerConfig& c) {
  Json json = {{"_from_model_config", true}, {"transformers_version", kTransformersVersion}};
  if (c.bos_token_id >= 0) json["bos_token_id"] = c.bos_token_id;
  if (!c.eos_token_ids.empty()) json["eos_token_id"] = EosJson(c.eos_token_ids);
  if (c.pad_token_id >= 0) json["pad_token_id"] = c.pad_token_id;
  return json.dump(2) + "\n";
}

}  // namespace rollout::models
