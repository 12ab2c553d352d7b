// Watches a sample's text for stop strings as its tokens arrive (detokenised with
// models::StreamingDecoder, special tokens skipped, so a stop string split across
// tokens is still found and a half UTF-8 character never is).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/streaming_decoder.h"
#include "models/tokenizer.h"

namespace rollout::engine {

class StopChecker {
 public:
  // `tokenizer` and `stops` (non-empty strings) must outlive the checker.
  StopChecker(const models::Tokenizer& tokenizer, const std::vector<std::string>& stops);

  // Adds the next generated token. True when the text now contains a stop string; the
  // text is then cut right before the first one and further tokens are not expected.
  bool Add(int32_t token);
  // The text so far (cut before the stop string when one was found); consumes the
  // checker's decoder state.
  std::string TakeText();

 private:
  models::StreamingDecoder decoder_;
  const std::vector<std::string>& stops_;
  size_t longest_stop_ = 0;
  std::string text_;
  bool stopped_ = false;
};

}  // namespace rollout::engine
