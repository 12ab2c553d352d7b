#include "models/tokenizer.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "models/nfc.h"
#include "models/tokenizer_config.h"
#include "models/unicode.h"

namespace rollout::models {
namespace {

// The id of a special token named in a config file; InvalidArgument when the
// vocabulary lacks it.
absl::StatusOr<int32_t> SpecialTokenId(const Tokenizer& tokenizer, const std::string& token,
                                       const std::string& key) {
  const int32_t id = tokenizer.TokenToId(token);
  if (id < 0) {
    return absl::InvalidArgumentError(absl::StrCat("tokenizer_config.json's ", key, " '", token,
                                                   "' is not in the tokenizer's vocabulary"));
  }
  return id;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::Load(const std::string& dir,
                                                           const TokenizerOptions& options) {
  const std::string path = JoinPath(dir, "tokenizer.json");
  ASSIGN_OR_RETURN(std::string json_text, ReadFile(path));
  ASSIGN_OR_RETURN(TokenizerSpec spec, WithContext(ParseTokenizerJson(json_text), path));
  ASSIGN_OR_RETURN(std::unique_ptr<ByteLevelBpe> bpe,
                   WithContext(ByteLevelBpe::Create(std::move(spec.model)), path));
  std::unique_ptr<Tokenizer> tokenizer(new Tokenizer(std::move(spec), std::move(bpe)));
  ASSIGN_OR_RETURN(TokenizerConfigFiles files, ReadTokenizerConfigFiles(dir));
  RETURN_IF_ERROR(WithContext(tokenizer->ResolveSpecialIds(files), dir));
  RETURN_IF_ERROR(tokenizer->ChooseChatTemplate(files, options));
  return tokenizer;
}

Tokenizer::Tokenizer(TokenizerSpec spec, std::unique_ptr<ByteLevelBpe> bpe)
    : normalizer_(spec.normalizer),
      pre_tokenizer_(std::move(spec.pre_tokenizer)),
      prefix_ids_(std::move(spec.prefix_ids)),
      suffix_ids_(std::move(spec.suffix_ids)),
      bpe_(std::move(bpe)),
      added_tokens_(spec.added_tokens),
      chat_template_(absl::FailedPreconditionError("not loaded")) {
  const std::vector<std::string>& vocab = bpe_->id_to_token();
  int32_t size = static_cast<int32_t>(vocab.size());
  for (const AddedToken& token : spec.added_tokens) size = std::max(size, token.id + 1);
  token_bytes_.resize(size);
  special_.resize(size, false);
  for (size_t id = 0; id < vocab.size(); ++id) token_bytes_[id] = ByteLevelToBytes(vocab[id]);
  // tokenizers looks ids up in the added vocabulary first, and decodes an added
  // token's content with the same ByteLevel decoder.
  for (const AddedToken& token : spec.added_tokens) {
    if (token.id < 0) continue;
    token_bytes_[token.id] = ByteLevelToBytes(token.content);
    special_[token.id] = token.special;
    added_token_ids_[token.content] = token.id;
  }
}

absl::Status Tokenizer::ResolveSpecialIds(const TokenizerConfigFiles& files) {
  if (files.eos_token) {
    ASSIGN_OR_RETURN(int32_t eos, SpecialTokenId(*this, *files.eos_token, "eos_token"));
    eos_token_ids_.push_back(eos);
  }
  for (int32_t id : files.generation_eos_ids) {
    if (std::find(eos_token_ids_.begin(), eos_token_ids_.end(), id) == eos_token_ids_.end()) {
      eos_token_ids_.push_back(id);
    }
  }
  if (files.pad_token) {
    ASSIGN_OR_RETURN(pad_token_id_, SpecialTokenId(*this, *files.pad_token, "pad_token"));
  } else if (!files.pad_key_present) {
    pad_token_id_ = files.generation_pad_id;
  }
  if (files.bos_token) {
    ASSIGN_OR_RETURN(bos_token_id_, SpecialTokenId(*this, *files.bos_token, "bos_token"));
  } else if (!files.bos_key_present) {
    bos_token_id_ = files.generation_bos_id;
  }
  return absl::OkStatus();
}

absl::Status Tokenizer::ChooseChatTemplate(const TokenizerConfigFiles& files,
                                           const TokenizerOptions& options) {
  if (!options.chat_format.empty()) {
    ASSIGN_OR_RETURN(chat_template_, ChatTemplate::FromFormatName(options.chat_format));
  } else if (!options.chat_template.empty()) {
    absl::StatusOr<ChatTemplate> named = ChatTemplate::FromFormatName(options.chat_template);
    ASSIGN_OR_RETURN(chat_template_,
                     named.ok() ? std::move(named)
                                : WithContext(ChatTemplate::Recognize(options.chat_template), "custom chat template"));
  } else if (files.chat_template) {
    chat_template_ =
        WithContext(ChatTemplate::Recognize(*files.chat_template), files.chat_template_origin);
  } else {
    chat_template_ = absl::FailedPreconditionError(
        "the model has no chat template (chat_template.jinja or tokenizer_config.json's "
        "chat_template); give an explicit prompt format (chatml, llama3, llama3.1, qwen3 or deepseek-r1: "
        "--chat_format on the command line, actor.model.custom_chat_template in a recipe)");
  }
  if (chat_template_.ok()) {
    chat_template_->set_enable_thinking(options.enable_thinking);
    chat_template_->set_date_string(options.date_string);
  }
  return absl::OkStatus();
}

std::vector<int32_t> Tokenizer::Encode(absl::string_view text, bool add_special_tokens) const {
  std::vector<int32_t> ids;
  if (add_special_tokens) ids = prefix_ids_;
  for (const TextSegment& segment : added_tokens_.Split(text)) {
    if (segment.token_id >= 0) {
      ids.push_back(segment.token_id);
    } else {
      EncodePlainText(segment.text, &ids);
    }
  }
  if (add_special_tokens) ids.insert(ids.end(), suffix_ids_.begin(), suffix_ids_.end());
  return ids;
}

void Tokenizer::EncodePlainText(absl::string_view text, std::vector<int32_t>* ids) const {
  std::string normalized;
  if (normalizer_ == NormalizerKind::kNfc) {
    normalized = NfcNormalize(text);
    text = normalized;
  }
  for (const std::string& word : PreTokenize(text, pre_tokenizer_)) bpe_->EncodeWord(word, ids);
}

std::string Tokenizer::Decode(absl::Span<const int32_t> ids, bool skip_special_tokens) const {
  std::string bytes;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size() || (skip_special_tokens && special_[id])) continue;
    bytes += token_bytes_[id];
  }
  std::string text;
  AppendUtf8Lossy(bytes, /*hold_incomplete_tail=*/false, &text);
  return text;
}

const std::string& Tokenizer::TokenBytes(int32_t id) const {
  static const std::string* empty = new std::string();
  return id >= 0 && id < vocab_size() ? token_bytes_[id] : *empty;
}

bool Tokenizer::IsSpecial(int32_t id) const { return id >= 0 && id < vocab_size() && special_[id]; }

int32_t Tokenizer::TokenToId(absl::string_view token) const {
  auto it = added_token_ids_.find(std::string(token));
  return it != added_token_ids_.end() ? it->second : bpe_->TokenToId(token);
}

absl::StatusOr<std::string> Tokenizer::RenderChat(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                                                  const std::vector<nlohmann::ordered_json>& tools) const {
  if (!chat_template_.ok()) return chat_template_.status();
  return chat_template_->Render(messages, add_generation_prompt, tools);
}

absl::StatusOr<RenderedChat> Tokenizer::RenderChatWithMessageEnds(const std::vector<ChatMessage>& messages,
                                                                  const std::vector<nlohmann::ordered_json>& tools) const {
  if (!chat_template_.ok()) return chat_template_.status();
  return chat_template_->RenderWithMessageEnds(messages, tools);
}

absl::StatusOr<std::vector<int32_t>> Tokenizer::EncodeChat(const std::vector<ChatMessage>& messages,
                                                           bool add_generation_prompt,
                                                           const std::vector<nlohmann::ordered_json>& tools) const {
  ASSIGN_OR_RETURN(std::string prompt, RenderChat(messages, add_generation_prompt, tools));
  return Encode(prompt);
}

}  // namespace rollout::models
