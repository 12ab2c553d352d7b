// NFC as specified in UAX #15: full canonical decomposition, canonical ordering of
// combining marks, then canonical composition of unblocked pairs. Hangul syllables
// are decomposed and composed algorithmically (Unicode §3.12).
#include "models/nfc.h"

#include <algorithm>
#include <vector>

#include "models/unicode.h"
#include "models/unicode_tables.h"

namespace rollout::models {
namespace {

using namespace unicode_internal;  // NOLINT: the generated tables

constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28;
constexpr char32_t kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

// Characters NFC leaves alone whatever surrounds them: combining class 0, stable
// under NFC, and never the second element of a composition
// (scripts/gen_unicode_tables.py checks these ranges when it regenerates the tables).
bool IsInert(char32_t c) {
  return c < 0x300 || (c >= 0x3400 && c <= 0x9FFF) || (c >= kSBase && c < kSBase + kSCount);
}

uint8_t CombiningClass(char32_t c) {
  if (c < 0x300) return 0;
  const CombiningRange* end = kCombiningRanges + kCombiningRangeCount;
  const CombiningRange* it = std::lower_bound(
      kCombiningRanges, end, c, [](const CombiningRange& r, char32_t cp) { return r.hi < cp; });
  return it != end && it->lo <= c ? it->combining_class : 0;
}

void Decompose(char32_t c, std::vector<char32_t>* out) {
  if (c >= kSBase && c < kSBase + kSCount) {
    const char32_t index = c - kSBase;
    out->push_back(kLBase + index / kNCount);
    out->push_back(kVBase + (index % kNCount) / kTCount);
    if (index % kTCount != 0) out->push_back(kTBase + index % kTCount);
    return;
  }
  const Decomposition* end = kDecompositions + kDecompositionCount;
  const Decomposition* it =
      std::lower_bound(kDecompositions, end, c,
                       [](const Decomposition& d, char32_t cp) { return d.code_point < cp; });
  if (it == end || it->code_point != c) {
    out->push_back(c);
    return;
  }
  out->insert(out->end(), kDecompositionPool + it->offset,
              kDecompositionPool + it->offset + it->length);
}

// The primary composite of (first, second), or 0 when there is none.
char32_t Compose(char32_t first, char32_t second) {
  if (first >= kLBase && first < kLBase + kLCount && second >= kVBase &&
      second < kVBase + kVCount) {
    return kSBase + ((first - kLBase) * kVCount + (second - kVBase)) * kTCount;
  }
  if (first >= kSBase && first < kSBase + kSCount && (first - kSBase) % kTCount == 0 &&
      second > kTBase && second < kTBase + kTCount) {
    return first + (second - kTBase);
  }
  const Composition* end = kCompositions + kCompositionCount;
  const Composition* it =
      std::lower_bound(kCompositions, end, std::make_pair(first, second),
                       [](const Composition& c, const std::pair<char32_t, char32_t>& key) {
                         return std::make_pair(c.first, c.second) < key;
                       });
  return it != end && it->first == first && it->second == second ? it->composite : 0;
}

// Stable sort of each run of non-starters by combining class.
void CanonicalOrder(std::vector<char32_t>* chars) {
  std::vector<char32_t>& s = *chars;
  for (size_t i = 1; i < s.size(); ++i) {
    const uint8_t cc = CombiningClass(s[i]);
    if (cc == 0) continue;
    for (size_t j = i; j > 0; --j) {
      const uint8_t previous = CombiningClass(s[j - 1]);
      if (previous == 0 || previous <= cc) break;
      std::swap(s[j - 1], s[j]);
    }
  }
}

// Composes in place: a character combines with the last starter when nothing in
// between blocks it (an intervening mark of class 0 or >= its own class).
void CanonicalCompose(std::vector<char32_t>* chars) {
  std::vector<char32_t> result;
  result.reserve(chars->size());
  ptrdiff_t starter = -1;
  int last_class = -1;  // class of the last mark kept after the starter; -1: none
  for (char32_t c : *chars) {
    const uint8_t cc = CombiningClass(c);
    if (starter >= 0 && (last_class == -1 || last_class < cc)) {
      if (char32_t composite = Compose(result[starter], c); composite != 0) {
        result[starter] = composite;
        continue;
      }
    }
    if (cc == 0) {
      starter = static_cast<ptrdiff_t>(result.size());
      last_class = -1;
    } else {
      last_class = cc;
    }
    result.push_back(c);
  }
  chars->swap(result);
}

// NFC of `run`: valid UTF-8 in which every character NFC may change is preceded by
// the starter it may compose with.
void NormalizeRun(absl::string_view run, std::string* out) {
  std::vector<char32_t> chars;
  chars.reserve(run.size() + 8);
  for (size_t pos = 0; pos < run.size();) {
    const DecodedChar decoded = DecodeUtf8(run, pos);
    Decompose(decoded.code_point, &chars);
    pos += decoded.length;
  }
  CanonicalOrder(&chars);
  CanonicalCompose(&chars);
  for (char32_t c : chars) AppendUtf8(c, out);
}

// End of the characters NFC may change that start at `pos`: the next inert
// character, invalid byte or the end of `text`.
size_t ActiveRunEnd(absl::string_view text, size_t pos) {
  while (pos < text.size()) {
    const DecodedChar decoded = DecodeUtf8(text, pos);
    if (decoded.code_point == kInvalidCodePoint || IsInert(decoded.code_point)) break;
    pos += decoded.length;
  }
  return pos;
}

}  // namespace

// Only the characters NFC may change are decoded, together with the inert character
// before them (it may compose with them, as 'e' with U+0301); inert characters block
// any interaction across them, so normalizing those runs alone equals normalizing
// the whole text.
std::string NfcNormalize(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t copied = 0;   // text[0, copied) is in `out`
  size_t starter = 0;  // where a run starting further on would begin
  for (size_t pos = 0; pos < text.size();) {
    const DecodedChar decoded = DecodeUtf8(text, pos);
    if (decoded.code_point == kInvalidCodePoint) {
      starter = pos += decoded.length;
      continue;
    }
    if (IsInert(decoded.code_point)) {
      starter = pos;
      pos += decoded.length;
      continue;
    }
    const size_t start = std::max(starter, copied);
    const size_t end = ActiveRunEnd(text, pos);
    out.append(text.data() + copied, start - copied);
    NormalizeRun(text.substr(start, end - start), &out);
    copied = starter = pos = end;
  }
  out.append(text.data() + copied, text.size() - copied);
  return out;
}

}  // namespace rollout::models
