// A Hugging Face byte-level BPE tokenizer (Qwen2/Qwen2.5, Llama 3, GPT-2) loaded
// from a model directory, matching the tokenizers library id for id:
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer, Tokenizer::Load(model_dir));
//   std::vector<int32_t> ids = tokenizer->Encode("Hello world");
//   std::string text = tokenizer->Decode(ids, /*skip_special_tokens=*/true);
//   ASSIGN_OR_RETURN(std::vector<int32_t> prompt,
//                    tokenizer->EncodeChat({{"user", "What is 2 + 3?"}}));
//
// Encoding: added tokens are cut out of the raw text first (tokenizers'
// AddedVocabulary), then each remaining piece is normalized (NFC if configured),
// pre-tokenized into words, mapped to byte-level characters and BPE-merged.
// Decoding concatenates the tokens' bytes and converts them to UTF-8 the way
// tokenizers' ByteLevel decoder does (invalid sequences become U+FFFD). transformers'
// clean_up_tokenization_spaces is not applied.
//
// Thread-safety: all methods are const and may be called concurrently (the BPE word
// cache inside is locked).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "models/added_tokens.h"
#include "models/byte_level_bpe.h"
#include "models/chat_template.h"
#include "models/tokenizer_json.h"

namespace rollout::models {

struct TokenizerConfigFiles;

struct TokenizerOptions {
  // The prompt format for chats: "" recognises the model's chat template; "chatml",
  // "llama3", "llama3.1", "qwen3" or "deepseek-r1" uses that format whatever the
  // template says.
  std::string chat_format;
  // The chat template to use instead of the model's (verl's custom_chat_template): a
  // format's name as chat_format takes, or a Jinja template recognised as the model's
  // would be (ChatTemplate::Recognize); empty: the model's. Unlike the model's, an
  // unrecognised one fails loading. chat_format takes precedence.
  std::string chat_template;
  // apply_chat_template's enable_thinking: false closes an empty think block in a
  // Qwen3 generation prompt (ChatTemplate::set_enable_thinking).
  bool enable_thinking = true;
  // apply_chat_template's date_string for Llama 3.1+ system headers; empty: the
  // template's own (ChatTemplate::set_date_string).
  std::string date_string;
};

class Tokenizer {
 public:
  // Reads <dir>/tokenizer.json (required) and, when present, tokenizer_config.json,
  // chat_template.jinja and generation_config.json. InvalidArgument naming the file
  // for unsupported or malformed content, or a special token missing from the
  // vocabulary; NotFound without tokenizer.json. An unrecognised chat template of the
  // model's does not fail loading (RenderChat reports it); an unrecognised
  // options.chat_template does.
  static absl::StatusOr<std::unique_ptr<Tokenizer>> Load(const std::string& dir,
                                                         const TokenizerOptions& options = {});

  // Token ids of `text` (UTF-8; invalid bytes are encoded as their raw bytes). With
  // `add_special_tokens`, the post-processor's tokens go around them (Llama 3:
  // <|begin_of_text|> first; Qwen2: nothing).
  std::vector<int32_t> Encode(absl::string_view text, bool add_special_tokens = false) const;

  // Text of `ids`, always valid UTF-8. Ids outside the vocabulary are skipped, as
  // tokenizers does; special added tokens too with `skip_special_tokens`.
  std::string Decode(absl::Span<const int32_t> ids, bool skip_special_tokens = false) const;

  // The bytes token `id` stands for (possibly part of a UTF-8 character); "" for an
  // id outside the vocabulary.
  const std::string& TokenBytes(int32_t id) const;
  bool IsSpecial(int32_t id) const;
  // The id of a token string as the vocabulary spells it ("Ġthe", "<|im_end|>"), or -1.
  int32_t TokenToId(absl::string_view token) const;
  // One past the largest id (model vocabulary and added tokens).
  int32_t vocab_size() const { return static_cast<int32_t>(token_bytes_.size()); }

  // End-of-sequence ids: tokenizer_config.json's eos_token first, then
  // generation_config.json's eos_token_id entries. May be empty.
  const std::vector<int32_t>& eos_token_ids() const { return eos_token_ids_; }
  // From tokenizer_config.json's pad_token/bos_token when the key is there (null:
  // none), else generation_config.json's pad_token_id/bos_token_id.
  std::optional<int32_t> pad_token_id() const { return pad_token_id_; }
  std::optional<int32_t> bos_token_id() const { return bos_token_id_; }

  // The chat prompt for `messages`, offering `tools` (see chat_template.h).
  // FailedPrecondition when the model has no chat template and no format was given; the
  // recognition error when its template is not supported.
  absl::StatusOr<std::string> RenderChat(const std::vector<ChatMessage>& messages, bool add_generation_prompt = true,
                                         const std::vector<nlohmann::ordered_json>& tools = {}) const;
  // ChatTemplate::RenderWithMessageEnds with RenderChat's errors: the whole
  // conversation's text and where each message's part ends.
  absl::StatusOr<RenderedChat> RenderChatWithMessageEnds(const std::vector<ChatMessage>& messages,
                                                         const std::vector<nlohmann::ordered_json>& tools = {}) const;
  // Encode(RenderChat(...)) without added special tokens (the template has them).
  absl::StatusOr<std::vector<int32_t>> EncodeChat(const std::vector<ChatMessage>& messages,
                                                  bool add_generation_prompt = true,
                                                  const std::vector<nlohmann::ordered_json>& tools = {}) const;

 private:
  Tokenizer(TokenizerSpec spec, std::unique_ptr<ByteLevelBpe> bpe);
  // Special ids and the chat format from the files next to tokenizer.json.
  absl::Status ResolveSpecialIds(const TokenizerConfigFiles& files);
  absl::Status ChooseChatTemplate(const TokenizerConfigFiles& files,
                                  const TokenizerOptions& options);
  void EncodePlainText(absl::string_view text, std::vector<int32_t>* ids) const;

  NormalizerKind normalizer_;
  PreTokenizerSpec pre_tokenizer_;
  std::vector<int32_t> prefix_ids_;
  std::vector<int32_t> suffix_ids_;
  std::unique_ptr<ByteLevelBpe> bpe_;
  AddedTokenMatcher added_tokens_;
  std::unordered_map<std::string, int32_t> added_token_ids_;  // by content
  std::vector<std::string> token_bytes_;                      // by id
  std::vector<bool> special_;                                 // by id
  std::vector<int32_t> eos_token_ids_;
  std::optional<int32_t> pad_token_id_;
  std::optional<int32_t> bos_token_id_;
  absl::StatusOr<ChatTemplate> chat_template_;
};

}  // namespace rollout::models
