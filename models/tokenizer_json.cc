#include "models/tokenizer_json.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::models {
namespace {

using nlohmann::json;

std::string TypeOf(const json& component) {
  return component.is_object() ? component.value("type", "") : "";
}

absl::Status Unsupported(const std::string& what, const json& component) {
  const std::string type = TypeOf(component);
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported ", what, " '", type.empty() ? component.dump() : type, "'"));
}

bool IsNullOrEmptyString(const json& value) {
  return value.is_null() || (value.is_string() && value.get<std::string>().empty());
}

absl::StatusOr<NormalizerKind> ParseNormalizer(const json& normalizer) {
  if (normalizer.is_null()) return NormalizerKind::kNone;
  const std::string type = TypeOf(normalizer);
  if (type == "NFC") return NormalizerKind::kNfc;
  if (type == "Sequence") {
    NormalizerKind kind = NormalizerKind::kNone;
    for (const json& step : normalizer.at("normalizers")) {
      ASSIGN_OR_RETURN(NormalizerKind step_kind, ParseNormalizer(step));
      if (step_kind != NormalizerKind::kNone) kind = step_kind;
    }
    return kind;
  }
  return Unsupported("normalizer", normalizer);
}

// Flattens Sequence pre-tokenizers into `steps`.
void FlattenPreTokenizers(const json& pre_tokenizer, std::vector<json>* steps) {
  if (TypeOf(pre_tokenizer) == "Sequence") {
    for (const json& step : pre_tokenizer.at("pretokenizers")) FlattenPreTokenizers(step, steps);
  } else {
    steps->push_back(pre_tokenizer);
  }
}

absl::StatusOr<SplitPattern> ParseSplit(const json& split) {
  const json& pattern = split.at("pattern");
  if (!pattern.contains("Regex")) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported Split pre-tokenizer pattern ",
                                                   pattern.dump(), " (only known regexes)"));
  }
  if (split.value("behavior", "") != "Isolated" || split.value("invert", false)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unsupported Split pre-tokenizer behavior '", split.value("behavior", ""),
        "' invert=", split.value("invert", false), " (supported: Isolated, not inverted)"));
  }
  return RecognizeSplitPattern(pattern.at("Regex").get<std::string>());
}

absl::StatusOr<PreTokenizerSpec> ParsePreTokenizer(const json& pre_tokenizer) {
  if (pre_tokenizer.is_null()) {
    return absl::InvalidArgumentError(
        "unsupported pre-tokenizer null (a byte-level BPE needs ByteLevel)");
  }
  std::vector<json> steps;
  FlattenPreTokenizers(pre_tokenizer, &steps);
  PreTokenizerSpec spec;
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::string type = TypeOf(steps[i]);
    if (type == "Split") {
      ASSIGN_OR_RETURN(SplitPattern pattern, ParseSplit(steps[i]));
      spec.splits.push_back(pattern);
    } else if (type == "ByteLevel" && i + 1 == steps.size()) {
      spec.byte_level_regex = steps[i].value("use_regex", true);
      spec.add_prefix_space = steps[i].value("add_prefix_space", false);
      return spec;
    } else if (type == "ByteLevel") {
      return absl::InvalidArgumentError(
          "unsupported pre-tokenizer: ByteLevel must be the last step");
    } else {
      return Unsupported("pre-tokenizer", steps[i]);
    }
  }
  return absl::InvalidArgumentError(
      "unsupported pre-tokenizer: no ByteLevel step (not a byte-level BPE)");
}

absl::Status ParseDecoder(const json& decoder) {
  if (TypeOf(decoder) == "ByteLevel") return absl::OkStatus();
  return Unsupported("decoder", decoder);
}

// Fills the ids TemplateProcessing's single-sequence template puts before and after.
absl::Status ParseTemplate(const json& processor, TokenizerSpec* spec) {
  bool after_sequence = false;
  for (const json& piece : processor.at("single")) {
    if (piece.contains("Sequence")) {
      if (piece.at("Sequence").at("id") != "A") {
        return absl::InvalidArgumentError("TemplateProcessing single template uses sequence B");
      }
      after_sequence = true;
      continue;
    }
    const std::string name = piece.at("SpecialToken").at("id").get<std::string>();
    const json& special = processor.at("special_tokens");
    if (!special.contains(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("TemplateProcessing names unknown special token '", name, "'"));
    }
    std::vector<int32_t>* target = after_sequence ? &spec->suffix_ids : &spec->prefix_ids;
    for (const json& id : special.at(name).at("ids")) target->push_back(id.get<int32_t>());
  }
  return absl::OkStatus();
}

absl::Status ParsePostProcessor(const json& processor, TokenizerSpec* spec) {
  const std::string type = TypeOf(processor);
  if (processor.is_null() || type == "ByteLevel") return absl::OkStatus();
  if (type == "TemplateProcessing") return ParseTemplate(processor, spec);
  if (type == "Sequence") {
    for (const json& step : processor.at("processors"))
      RETURN_IF_ERROR(ParsePostProcessor(step, spec));
    return absl::OkStatus();
  }
  return Unsupported("post-processor", processor);
}

absl::StatusOr<std::pair<std::string, std::string>> ParseMerge(const json& merge, size_t rank) {
  if (merge.is_array() && merge.size() == 2) {
    return std::make_pair(merge[0].get<std::string>(), merge[1].get<std::string>());
  }
  if (merge.is_string()) {
    const std::string text = merge.get<std::string>();
    const size_t space = text.find(' ');
    if (space != std::string::npos && text.find(' ', space + 1) == std::string::npos) {
      return std::make_pair(text.substr(0, space), text.substr(space + 1));
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("merge ", rank, " is ", merge.dump(), "; expected \"a b\" or [\"a\", \"b\"]"));
}

absl::StatusOr<BpeModelSpec> ParseModel(const json& model) {
  if (TypeOf(model) != "BPE") return Unsupported("model type", model);
  if (!model.value("dropout", json()).is_null() && model.at("dropout").get<double>() != 0.0) {
    return absl::InvalidArgumentError("unsupported BPE option: dropout");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (!IsNullOrEmptyString(model.value(key, json()))) {
      return absl::InvalidArgumentError(absl::StrCat("unsupported BPE option: ", key));
    }
  }
  if (model.value("byte_fallback", false)) {
    return absl::InvalidArgumentError("unsupported BPE option: byte_fallback");
  }
  BpeModelSpec spec;
  spec.ignore_merges = model.value("ignore_merges", false);
  for (const auto& [token, id] : model.at("vocab").items()) spec.vocab[token] = id.get<int32_t>();
  const json& merges = model.at("merges");
  spec.merges.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    ASSIGN_OR_RETURN(auto merge, ParseMerge(merges[rank], rank));
    spec.merges.push_back(std::move(merge));
  }
  return spec;
}

std::vector<AddedToken> ParseAddedTokens(const json& added_tokens) {
  std::vector<AddedToken> tokens;
  if (added_tokens.is_null()) return tokens;
  for (const json& entry : added_tokens) {
    AddedToken token;
    token.id = entry.at("id").get<int32_t>();
    token.content = entry.at("content").get<std::string>();
    token.special = entry.value("special", false);
    token.lstrip = entry.value("lstrip", false);
    token.rstrip = entry.value("rstrip", false);
    token.single_word = entry.value("single_word", false);
    token.normalized = entry.value("normalized", false);
    tokens.push_back(std::move(token));
  }
  return tokens;
}

absl::StatusOr<TokenizerSpec> ParseSpec(const json& root) {
  TokenizerSpec spec;
  ASSIGN_OR_RETURN(spec.model, ParseModel(root.at("model")));
  spec.added_tokens = ParseAddedTokens(root.value("added_tokens", json()));
  ASSIGN_OR_RETURN(spec.normalizer, ParseNormalizer(root.value("normalizer", json())));
  ASSIGN_OR_RETURN(spec.pre_tokenizer, ParsePreTokenizer(root.value("pre_tokenizer", json())));
  RETURN_IF_ERROR(ParseDecoder(root.value("decoder", json())));
  RETURN_IF_ERROR(ParsePostProcessor(root.value("post_processor", json()), &spec));
  return spec;
}

}  // namespace

absl::StatusOr<TokenizerSpec> ParseTokenizerJson(absl::string_view json_text) {
  const json root =
      json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) {
    return absl::InvalidArgumentError("not a JSON object");
  }
  try {
    return ParseSpec(root);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("malformed tokenizer.json: ", e.what()));
  }
}

}  // namespace rollout::models
