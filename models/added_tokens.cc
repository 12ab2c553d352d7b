#include "models/added_tokens.h"

#include <algorithm>

#include "models/unicode.h"

namespace rollout::models {
namespace {

bool IsContinuationByte(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) == 0x80; }

// Where the character ending at `end` (> 0) starts.
size_t PreviousCharStart(absl::string_view text, size_t end) {
  size_t start = end - 1;
  while (start > 0 && IsContinuationByte(text[start])) --start;
  return start;
}

// The character ending at `end`, or kInvalidCodePoint when there is none.
char32_t CharBefore(absl::string_view text, size_t end) {
  if (end == 0) return kInvalidCodePoint;
  const size_t start = PreviousCharStart(text, end);
  const DecodedChar decoded = DecodeUtf8(text, start);
  return start + decoded.length == end ? decoded.code_point : kInvalidCodePoint;
}

bool IsWordChar(char32_t c) { return c != kInvalidCodePoint && (IsLetter(c) || IsNumber(c)); }

// Start of the whitespace run ending at `end`, no earlier than `floor`.
size_t WhitespaceStart(absl::string_view text, size_t end, size_t floor) {
  while (end > floor) {
    const char32_t c = CharBefore(text, end);
    if (c == kInvalidCodePoint || !IsWhitespace(c)) break;
    end = PreviousCharStart(text, end);
  }
  return end;
}

// End of the whitespace run starting at `pos`.
size_t WhitespaceEnd(absl::string_view text, size_t pos) {
  while (pos < text.size()) {
    const DecodedChar decoded = DecodeUtf8(text, pos);
    if (decoded.code_point == kInvalidCodePoint || !IsWhitespace(decoded.code_point)) break;
    pos += decoded.length;
  }
  return pos;
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)) {
  for (int i = 0; i < static_cast<int>(tokens_.size()); ++i) {
    if (tokens_[i].content.empty()) continue;
    by_first_byte_[static_cast<unsigned char>(tokens_[i].content[0])].push_back(i);
  }
  for (std::vector<int>& bucket : by_first_byte_) {
    std::stable_sort(bucket.begin(), bucket.end(), [this](int a, int b) {
      return tokens_[a].content.size() > tokens_[b].content.size();
    });
  }
}

int AddedTokenMatcher::LongestAt(absl::string_view text, size_t pos) const {
  for (int index : by_first_byte_[static_cast<unsigned char>(text[pos])]) {
    if (text.substr(pos).substr(0, tokens_[index].content.size()) == tokens_[index].content) {
      return index;
    }
  }
  return -1;
}

std::vector<TextSegment> AddedTokenMatcher::Split(absl::string_view text) const {
  std::vector<TextSegment> segments;
  size_t plain_start = 0;  // start of the pending plain text
  for (size_t pos = 0; pos < text.size();) {
    const int index = LongestAt(text, pos);
    if (index < 0) {
      ++pos;
      continue;
    }
    const AddedToken& token = tokens_[index];
    size_t start = pos;
    size_t stop = pos + token.content.size();
    pos = stop;
    if (token.single_word &&
        (IsWordChar(CharBefore(text, start)) || IsWordChar(DecodeUtf8(text, stop).code_point))) {
      continue;
    }
    if (token.lstrip) start = WhitespaceStart(text, start, plain_start);
    if (token.rstrip) stop = WhitespaceEnd(text, stop);
    if (start > plain_start) {
      segments.push_back({text.substr(plain_start, start - plain_start), -1});
    }
    segments.push_back({text.substr(start, stop - start), token.id});
    plain_start = pos = stop;
  }
  if (plain_start < text.size()) segments.push_back({text.substr(plain_start), -1});
  return segments;
}

}  // namespace rollout::models
