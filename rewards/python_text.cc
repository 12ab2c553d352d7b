#include "rewards/python_text.h"

#include <cstdint>

namespace rollout::rewards {
namespace {

// The code point starting at text[at] and its length in bytes; the caller passes text
// that is valid UTF-8 (responses are decoded by the tokenizer, ground truths by JSON).
uint32_t DecodeAt(absl::string_view text, size_t at, size_t* length) {
  const uint8_t lead = static_cast<uint8_t>(text[at]);
  int extra = lead < 0x80 ? 0 : lead < 0xE0 ? 1 : lead < 0xF0 ? 2 : 3;
  uint32_t code = extra == 0 ? lead : lead & (0x3F >> extra);
  size_t end = at + 1;
  for (; extra > 0 && end < text.size() && IsContinuationByte(text[end]); --extra, ++end) {
    code = (code << 6) | (static_cast<uint8_t>(text[end]) & 0x3F);
  }
  *length = end - at;
  return code;
}

bool IsPythonSpace(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

bool IsPythonDigit(uint32_t c) {
  return (c >= '0' && c <= '9') || (c >= 0xFF10 && c <= 0xFF19) || (c >= 0x0660 && c <= 0x0669) ||
         (c >= 0x06F0 && c <= 0x06F9) || (c >= 0x0966 && c <= 0x096F) || c == 0xB2 || c == 0xB3 ||
         c == 0xB9 || c == 0x2070 || (c >= 0x2074 && c <= 0x2079) || (c >= 0x2080 && c <= 0x2089) ||
         (c >= 0x2460 && c <= 0x2468);
}

}  // namespace

absl::string_view FirstCodePoint(absl::string_view text) {
  size_t end = 1;
  while (end < text.size() && IsContinuationByte(text[end])) ++end;
  return text.substr(0, end);
}

size_t CodePointCount(absl::string_view text) {
  size_t count = 0;
  for (const char c : text) count += IsContinuationByte(c) ? 0 : 1;
  return count;
}

absl::string_view LastCodePoints(absl::string_view text, size_t n) {
  size_t start = text.size();
  size_t counted = 0;
  while (start > 0 && counted < n) {
    --start;
    if (!IsContinuationByte(text[start])) ++counted;
  }
  return text.substr(start);
}

std::vector<std::string> FindAll(const RE2& re, absl::string_view text) {
  std::vector<std::string> matches;
  re2::StringPiece input(text.data(), text.size());
  std::string match;
  while (RE2::FindAndConsume(&input, re, &match)) matches.push_back(match);
  return matches;
}

absl::string_view PythonStrip(absl::string_view text) {
  size_t begin = 0, length = 0;
  while (begin < text.size() && IsPythonSpace(DecodeAt(text, begin, &length))) begin += length;
  size_t end = text.size();
  while (end > begin) {
    size_t start = end - 1;
    while (start > begin && IsContinuationByte(text[start])) --start;
    if (!IsPythonSpace(DecodeAt(text, start, &length))) break;
    end = start;
  }
  return text.substr(begin, end - begin);
}

bool IsPythonDigits(absl::string_view text) {
  if (text.empty()) return false;
  size_t length = 0;
  for (size_t at = 0; at < text.size(); at += length) {
    if (!IsPythonDigit(DecodeAt(text, at, &length))) return false;
  }
  return true;
}

}  // namespace rollout::rewards
