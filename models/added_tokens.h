// Finds added tokens (special tokens like <|im_end|> and other added vocabulary) in
// raw text before pre-tokenization, as tokenizers' AddedVocabulary does: scanning
// left to right, the longest token starting at the leftmost position wins, and the
// scan resumes after it.
//
//   lstrip       the token also takes the whitespace right before it
//   rstrip       ... and the whitespace right after it
//   single_word  the match is dropped when a letter/digit touches either side
//
// Tokens with normalized=true are matched in the raw text as well (tokenizers matches
// them after normalization; with NFC the two only differ when a token starts or ends
// inside a composed character sequence).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "models/tokenizer_json.h"

namespace rollout::models {

struct TextSegment {
  absl::string_view text;  // into the input; for a token: the matched span
  int32_t token_id;        // -1: plain text to pre-tokenize
};

class AddedTokenMatcher {
 public:
  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);

  // `text` cut into plain-text segments and added tokens, in order; segments are
  // never empty and concatenate back to `text` (whitespace taken by lstrip/rstrip is
  // part of the token's span and produces no ids).
  std::vector<TextSegment> Split(absl::string_view text) const;

  bool empty() const { return tokens_.empty(); }

 private:
  // The token (index into tokens_) with the longest content matching at text[pos],
  // or -1.
  int LongestAt(absl::string_view text, size_t pos) const;

  std::vector<AddedToken> tokens_;
  // Indices into tokens_ by first byte of content, longest content first.
  std::array<std::vector<int>, 256> by_first_byte_;
};

}  // namespace rollout::models
