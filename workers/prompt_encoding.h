// Prompts as the controller sends them (raw text, or chat messages as JSON) to token ids
// for the rollout, with verl's `data.truncation` for prompts longer than
// `data.max_prompt_length`: error (the default), left (keep the end), right (keep the
// start) or middle (keep both ends); TRL's keep_end and keep_start as PromptTruncation
// maps them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <memory>

#include "absl/status/statusor.h"
#include "common/batch.h"
#include "models/tokenizer.h"
#include "proto/recipe.pb.h"

namespace rollout::workers {

struct PromptEncoding {
  int64_t max_prompt_length = 512;
  std::string truncation = "error";  // data.truncation: error | left | right | middle | keep_end | keep_start
};

// data.truncation as TruncateTokens takes it for a prompt and for a response: verl's
// modes cut both alike; TRL's keep_end keeps a prompt's end (left) and a response's start
// (right), keep_start the start (right) of both.
std::string PromptTruncation(const std::string& truncation);
std::string ResponseTruncation(const std::string& truncation);

// `prompt` is raw text when `is_chat` is false (encoded as is, no template), else chat
// messages as JSON (models/json_prompt.h: a list, or {"messages", "tools"}) rendered with
// the model's chat template and the assistant header. InvalidArgument naming `where` for bad messages or, with
// truncation "error", a prompt that is too long.
absl::StatusOr<std::vector<int32_t>> EncodePrompt(const models::Tokenizer& tokenizer,
                                                  const std::string& prompt, bool is_chat,
                                                  const PromptEncoding& encoding,
                                                  const std::string& where);

// The same ids before any truncation.
absl::StatusOr<std::vector<int32_t>> EncodeWholePrompt(const models::Tokenizer& tokenizer,
                                                       const std::string& prompt, bool is_chat,
                                                       const std::string& where);

// The actor's tokenizer as the recipe configures it: actor.model.tokenizer_path (else
// path), custom_chat_template and data.apply_chat_template_kwargs.
absl::StatusOr<std::unique_ptr<models::Tokenizer>> LoadActorTokenizer(const config::Recipe& recipe);

// For data.filter_overlong_prompts: the string columns prompt and prompt_format (text |
// chat), as the controller sends prompts, to the tensor prompt_length [N] int64, each
// prompt's token count before truncation. InvalidArgument naming the row for a bad
// format or prompt.
absl::StatusOr<Batch> PromptLengths(const models::Tokenizer& tokenizer, const Batch& input);

// Shortens `ids` to `max_length`, the recipe's `limit_key`, as `truncation` (error, left,
// right or middle) says; with
// "error" (or an unknown mode) when it is too long, InvalidArgument "WHAT has N tokens,
// more than LIMIT_KEY (MAX)..." (`what`: "prompt 7: the prompt").
absl::StatusOr<std::vector<int32_t>> TruncateTokens(std::vector<int32_t> ids, int64_t max_length,
                                                    const std::string& limit_key,
                                                    const std::string& truncation,
                                                    const std::string& what);

// The positions of [0, n) that TruncateTokens keeps of n tokens, in order: for cutting
// tokens and their per-token marks alike. TruncateTokens' errors.
absl::StatusOr<std::vector<int32_t>> TruncatedPositions(size_t n, int64_t max_length, const std::string& limit_key,
                                                        const std::string& truncation, const std::string& what);

}  // namespace rollout::workers
