#include "models/streaming_decoder.h"

#include "models/unicode.h"

namespace rollout::models {

StreamingDecoder::StreamingDecoder(const Tokenizer& tokenizer, bool skip_special_tokens)
    : tokenizer_(tokenizer), skip_special_tokens_(skip_special_tokens) {}

std::string StreamingDecoder::Add(int32_t id) { return Add(absl::MakeConstSpan(&id, 1)); }

std::string StreamingDecoder::Add(absl::Span<const int32_t> ids) {
  for (int32_t id : ids) {
    if (skip_special_tokens_ && tokenizer_.IsSpecial(id)) continue;
    pending_ += tokenizer_.TokenBytes(id);
  }
  std::string text;
  const size_t consumed = AppendUtf8Lossy(pending_, /*hold_incomplete_tail=*/true, &text);
  pending_.erase(0, consumed);
  return text;
}

std::string StreamingDecoder::Finish() {
  std::string text;
  AppendUtf8Lossy(pending_, /*hold_incomplete_tail=*/false, &text);
  pending_.clear();
  return text;
}

}  // namespace rollout::models
