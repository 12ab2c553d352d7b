#include "models/unicode.h"

#include <algorithm>

namespace rollout::models {
namespace {

using unicode_internal::ClassRange;
using unicode_internal::kClassRangeCount;
using unicode_internal::kClassRanges;

enum class ScanResult { kValid, kInvalid, kTruncated };

struct Scan {
  ScanResult result;
  char32_t code_point;
  size_t length;  // kInvalid/kTruncated: the maximal subpart (>= 1 byte)
};

// Reads one sequence at text[pos] (pos < size) following the Unicode table of
// well-formed UTF-8 byte sequences (Table 3-7).
Scan ScanUtf8(absl::string_view text, size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  if (lead < 0x80) return {ScanResult::kValid, lead, 1};
  size_t length;
  unsigned char second_lo = 0x80, second_hi = 0xBF;
  char32_t value;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    value = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    value = lead & 0x0F;
    if (lead == 0xE0) second_lo = 0xA0;
    if (lead == 0xED) second_hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    value = lead & 0x07;
    if (lead == 0xF0) second_lo = 0x90;
    if (lead == 0xF4) second_hi = 0x8F;
  } else {
    return {ScanResult::kInvalid, kInvalidCodePoint, 1};
  }
  for (size_t i = 1; i < length; ++i) {
    if (pos + i >= text.size()) return {ScanResult::kTruncated, kInvalidCodePoint, i};
    const auto byte = static_cast<unsigned char>(text[pos + i]);
    const unsigned char lo = i == 1 ? second_lo : 0x80;
    const unsigned char hi = i == 1 ? second_hi : 0xBF;
    if (byte < lo || byte > hi) return {ScanResult::kInvalid, kInvalidCodePoint, i};
    value = (value << 6) | (byte & 0x3F);
  }
  return {ScanResult::kValid, value, length};
}

}  // namespace

DecodedChar DecodeUtf8(absl::string_view text, size_t pos) {
  if (pos >= text.size()) return {kInvalidCodePoint, 0};
  const Scan scan = ScanUtf8(text, pos);
  if (scan.result == ScanResult::kValid) return {scan.code_point, scan.length};
  return {kInvalidCodePoint, 1};
}

void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

size_t AppendUtf8Lossy(absl::string_view bytes, bool hold_incomplete_tail, std::string* out) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    const Scan scan = ScanUtf8(bytes, pos);
    if (scan.result == ScanResult::kValid) {
      out->append(bytes.data() + pos, scan.length);
    } else if (scan.result == ScanResult::kTruncated && hold_incomplete_tail) {
      return pos;
    } else {
      AppendUtf8(kReplacementCharacter, out);
    }
    pos += scan.length;
  }
  return pos;
}

bool IsValidUtf8(absl::string_view bytes) {
  for (size_t pos = 0; pos < bytes.size();) {
    const Scan scan = ScanUtf8(bytes, pos);
    if (scan.result != ScanResult::kValid) return false;
    pos += scan.length;
  }
  return true;
}

CharClass ClassOf(char32_t c) {
  if (c < 0x80) {
    if (c == ' ' || (c >= '\t' && c <= '\r')) return CharClass::kWhitespace;
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return CharClass::kLetter;
    if (c >= '0' && c <= '9') return CharClass::kNumber;
    return CharClass::kOther;
  }
  const ClassRange* end = kClassRanges + kClassRangeCount;
  // The first range whose upper bound is >= c.
  const ClassRange* it = std::lower_bound(
      kClassRanges, end, c, [](const ClassRange& range, char32_t cp) { return range.hi < cp; });
  if (it != end && it->lo <= c) return it->char_class;
  return CharClass::kOther;
}

}  // namespace rollout::models
