// Reading a Hugging Face `tokenizer.json` (the tokenizers library's serialization)
// into the parts this project implements: a byte-level BPE model, added tokens, an
// optional NFC normalizer, byte-level pre-tokenization with known split regexes, the
// ByteLevel decoder and TemplateProcessing post-processors.
//
// Anything else is refused with InvalidArgument naming it ("unsupported normalizer
// 'NFKC'"), so a tokenizer either loads and matches tokenizers exactly or does not
// load. `truncation` and `padding` are ignored (transformers resets both per call).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "models/byte_level_bpe.h"
#include "models/pretokenizer.h"

namespace rollout::models {

struct AddedToken {
  int32_t id = -1;
  std::string content;
  bool special = false;      // skipped by Decode(skip_special_tokens=true)
  bool lstrip = false;       // the match also takes the whitespace before it
  bool rstrip = false;       // ... and after it
  bool single_word = false;  // only matches when not inside a word
  bool normalized = false;
};

enum class NormalizerKind { kNone, kNfc };

struct TokenizerSpec {
  BpeModelSpec model;
  std::vector<AddedToken> added_tokens;
  NormalizerKind normalizer = NormalizerKind::kNone;
  PreTokenizerSpec pre_tokenizer;
  // What Encode(text, add_special_tokens=true) puts around the ids (the post-
  // processor's "single" template, e.g. Llama 3's <|begin_of_text|>).
  std::vector<int32_t> prefix_ids;
  std::vector<int32_t> suffix_ids;
};

// InvalidArgument for malformed JSON, missing fields and unsupported components.
absl::StatusOr<TokenizerSpec> ParseTokenizerJson(absl::string_view json_text);

}  // namespace rollout::models
