// Incremental detokenization for streaming generation: feed token ids as they come,
// get back the text they complete. Bytes of a UTF-8 character split across tokens
// (CJK, emoji) are held until the character is complete, so every returned piece is
// valid UTF-8 and no character is ever emitted in halves.
//
//   StreamingDecoder decoder(*tokenizer, /*skip_special_tokens=*/true);
//   for (int32_t id : generated) std::cout << decoder.Add(id);
//   std::cout << decoder.Finish();
//
// The concatenation of every Add() result and Finish() equals
// tokenizer.Decode(all ids, skip_special_tokens). Not thread-safe; one per sequence.
// The tokenizer must outlive the decoder.
#pragma once

#include <cstdint>
#include <string>

#include "absl/types/span.h"
#include "models/tokenizer.h"

namespace rollout::models {

class StreamingDecoder {
 public:
  explicit StreamingDecoder(const Tokenizer& tokenizer, bool skip_special_tokens = false);

  // The text that `id` completes (possibly empty).
  std::string Add(int32_t id);
  std::string Add(absl::Span<const int32_t> ids);

  // The rest: a held unfinished character comes out as U+FFFD (as Decode does), and
  // the decoder starts over for a new sequence.
  std::string Finish();

  // Bytes held back waiting for the rest of a character (at most 3).
  size_t pending_bytes() const { return pending_.size(); }

 private:
  const Tokenizer& tokenizer_;
  bool skip_special_tokens_;
  std::string pending_;
};

}  // namespace rollout::models
