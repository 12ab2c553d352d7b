#include "workers/prompt_encoding.h"

#include <ATen/ATen.h>

#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "models/json_prompt.h"

namespace rollout::workers {

std::string PromptTruncation(const std::string& truncation) {
  if (truncation == "keep_end") return "left";
  if (truncation == "keep_start") return "right";
  return truncation;
}

std::string ResponseTruncation(const std::string& truncation) {
  return truncation == "keep_end" || truncation == "keep_start" ? "right" : truncation;
}

absl::StatusOr<std::vector<int32_t>> TruncateTokens(std::vector<int32_t> ids, int64_t max_length,
                                                    const std::string& limit_key,
                                                    const std::string& truncation,
                                                    const std::string& what) {
  const int64_t length = static_cast<int64_t>(ids.size());
  if (length <= max_length) return ids;
  if (truncation == "left") return std::vector<int32_t>(ids.end() - max_length, ids.end());
  if (truncation == "right") return std::vector<int32_t>(ids.begin(), ids.begin() + max_length);
  if (truncation == "middle") {
    const int64_t head = max_length / 2;
    std::vector<int32_t> kept(ids.begin(), ids.begin() + head);
    kept.insert(kept.end(), ids.end() - (max_length - head), ids.end());
    return kept;
  }
  if (truncation == "error") {
    return absl::InvalidArgumentError(absl::StrCat(what, " has ", length, " tokens, more than ", limit_key,
                                                   " (", max_length,
                                                   "); raise it, or set data.truncation to cut it (left, right, middle, keep_end, keep_start)"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown data.truncation '", truncation,
                   "'; expected error, left, right, middle, keep_end or keep_start"));
}

absl::StatusOr<std::vector<int32_t>> TruncatedPositions(size_t n, int64_t max_length, const std::string& limit_key,
                                                        const std::string& truncation, const std::string& what) {
  std::vector<int32_t> positions(n);
  std::iota(positions.begin(), positions.end(), 0);
  return TruncateTokens(std::move(positions), max_length, limit_key, truncation, what);
}

absl::StatusOr<std::vector<int32_t>> EncodePrompt(const models::Tokenizer& tokenizer,
                                                  const std::string& prompt, bool is_chat,
                                                  const PromptEncoding& encoding,
                                                  const std::string& where) {
  ASSIGN_OR_RETURN(std::vector<int32_t> ids, EncodeWholePrompt(tokenizer, prompt, is_chat, where));
  return TruncateTokens(std::move(ids), encoding.max_prompt_length, "data.max_prompt_length",
                        PromptTruncation(encoding.truncation), where + ": the prompt");
}

absl::StatusOr<std::vector<int32_t>> EncodeWholePrompt(const models::Tokenizer& tokenizer,
                                                       const std::string& prompt, bool is_chat,
                                                       const std::string& where) {
  std::vector<int32_t> ids;
  if (is_chat) {
    absl::StatusOr<models::ChatPrompt> parsed = models::ParseChatPromptText(prompt);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", parsed.status().message()));
    }
    absl::StatusOr<std::vector<int32_t>> encoded =
        tokenizer.EncodeChat(parsed->messages, /*add_generation_prompt=*/true, parsed->tools);
    if (!encoded.ok()) {
      return absl::Status(encoded.status().code(), absl::StrCat(where, ": ", encoded.status().message()));
    }
    ids = *std::move(encoded);
  } else {
    ids = tokenizer.Encode(prompt);
  }
  if (ids.empty()) return absl::InvalidArgumentError(absl::StrCat(where, ": the prompt has no tokens"));
  return ids;
}

absl::StatusOr<std::unique_ptr<models::Tokenizer>> LoadActorTokenizer(const config::Recipe& recipe) {
  const config::ModelConfig& model = recipe.actor().model();
  models::TokenizerOptions options;
  const config::ChatTemplateKwargs& chat_kwargs = recipe.data().apply_chat_template_kwargs();
  options.enable_thinking = chat_kwargs.enable_thinking();
  options.date_string = chat_kwargs.date_string();
  options.chat_template = model.custom_chat_template();
  return models::Tokenizer::Load(model.tokenizer_path().empty() ? model.path() : model.tokenizer_path(), options);
}

absl::StatusOr<Batch> PromptLengths(const models::Tokenizer& tokenizer, const Batch& input) {
  ASSIGN_OR_RETURN(const std::vector<std::string> prompts, input.Strings("prompt"));
  ASSIGN_OR_RETURN(const std::vector<std::string> formats, input.Strings("prompt_format"));
  std::vector<int64_t> lengths;
  for (size_t row = 0; row < prompts.size(); ++row) {
    const std::string where = absl::StrCat("prompt row ", row);
    if (formats[row] != "text" && formats[row] != "chat") {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": prompt_format '", formats[row], "'; expected text or chat"));
    }
    ASSIGN_OR_RETURN(const std::vector<int32_t> ids,
                     EncodeWholePrompt(tokenizer, prompts[row], formats[row] == "chat", where));
    lengths.push_back(static_cast<int64_t>(ids.size()));
  }
  Batch output;
  RETURN_IF_ERROR(output.AddTensor("prompt_length", at::tensor(lengths, at::kLong)));
  return output;
}

}  // namespace rollout::workers
