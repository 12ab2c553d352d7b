#include "models/pretokenizer.h"

#include "absl/strings/str_cat.h"
#include "models/unicode.h"

namespace rollout::models {
namespace {

const std::string& Gpt2Regex() {
  static const std::string* regex = new std::string(
      R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)");
  return *regex;
}
const std::string& Qwen2Regex() {
  static const std::string* regex = new std::string(
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)");
  return *regex;
}
const std::string& Llama3Regex() {
  static const std::string* regex = new std::string(
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)");
  return *regex;
}

// The text decoded once: code point and class per character, and byte offsets
// (offset[n] == text.size()).
struct Chars {
  std::vector<char32_t> code_point;
  std::vector<CharClass> char_class;
  std::vector<size_t> offset;
  size_t size() const { return code_point.size(); }
  bool Is(size_t i, CharClass c) const { return i < size() && char_class[i] == c; }
  bool IsCrLf(size_t i) const {
    return i < size() && (code_point[i] == '\r' || code_point[i] == '\n');
  }
};

Chars Decode(absl::string_view text) {
  Chars chars;
  chars.code_point.reserve(text.size());
  chars.char_class.reserve(text.size());
  chars.offset.reserve(text.size() + 1);
  for (size_t pos = 0; pos < text.size();) {
    const DecodedChar decoded = DecodeUtf8(text, pos);
    chars.code_point.push_back(decoded.code_point);
    chars.char_class.push_back(ClassOf(decoded.code_point));
    chars.offset.push_back(pos);
    pos += decoded.length;
  }
  chars.offset.push_back(text.size());
  return chars;
}

// End of the run of class `c` starting at i (i itself when there is none).
size_t RunEnd(const Chars& s, size_t i, CharClass c) {
  while (s.Is(i, c)) ++i;
  return i;
}

// 's|'t|'re|'ve|'m|'ll|'d, case-insensitive when `ignore_case` (Unicode simple case
// folding: besides ASCII, U+017F LATIN SMALL LETTER LONG S folds to 's'); 0: no match.
size_t MatchContraction(const Chars& s, size_t i, bool ignore_case) {
  if (s.code_point[i] != '\'' || i + 1 >= s.size()) return 0;
  auto letter = [&](size_t k) -> char32_t {
    if (k >= s.size()) return 0;
    const char32_t c = s.code_point[k];
    if (!ignore_case) return c;
    if (c == 0x17F) return 's';
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
  };
  const char32_t first = letter(i + 1);
  if (first == 's' || first == 't' || first == 'm' || first == 'd') return i + 2;
  const char32_t second = letter(i + 2);
  if ((first == 'r' && second == 'e') || (first == 'v' && second == 'e') ||
      (first == 'l' && second == 'l')) {
    return i + 3;
  }
  return 0;
}

// ` ?X+` for the class X: an optional U+0020 only when a run of X follows it.
size_t MatchSpaceThenRun(const Chars& s, size_t i, CharClass c) {
  size_t j = i;
  if (s.code_point[j] == ' ' && s.Is(j + 1, c)) ++j;
  return s.Is(j, c) ? RunEnd(s, j, c) : 0;
}

// \s+(?!\S) then \s+: a whitespace run leaves its last character to the next word
// when a non-space follows, unless the run is a single character.
size_t MatchWhitespace(const Chars& s, size_t i) {
  const size_t end = RunEnd(s, i, CharClass::kWhitespace);
  if (end == i) return 0;
  if (end == s.size() || end - i < 2) return end;
  return end - 1;
}

size_t MatchGpt2(const Chars& s, size_t i) {
  if (size_t end = MatchContraction(s, i, /*ignore_case=*/false)) return end;
  for (CharClass c : {CharClass::kLetter, CharClass::kNumber, CharClass::kOther}) {
    if (size_t end = MatchSpaceThenRun(s, i, c)) return end;
  }
  return MatchWhitespace(s, i);
}

// Qwen2 and Llama 3 differ only in how many digits one word takes.
size_t MatchQwenStyle(const Chars& s, size_t i, size_t max_digits) {
  if (size_t end = MatchContraction(s, i, /*ignore_case=*/true)) return end;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (!s.IsCrLf(i) && (s.Is(i, CharClass::kOther) || s.Is(i, CharClass::kWhitespace)) &&
      s.Is(i + 1, CharClass::kLetter)) {
    return RunEnd(s, i + 1, CharClass::kLetter);
  }
  if (s.Is(i, CharClass::kLetter)) return RunEnd(s, i, CharClass::kLetter);
  // \p{N} or \p{N}{1,3}
  if (s.Is(i, CharClass::kNumber)) {
    size_t end = i;
    while (end - i < max_digits && s.Is(end, CharClass::kNumber)) ++end;
    return end;
  }
  // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
  if (size_t end = MatchSpaceThenRun(s, i, CharClass::kOther)) {
    while (s.IsCrLf(end)) ++end;
    return end;
  }
  // \s*[\r\n]+ : the whitespace run up to its last line break.
  const size_t run_end = RunEnd(s, i, CharClass::kWhitespace);
  for (size_t k = run_end; k > i; --k) {
    if (s.IsCrLf(k - 1)) return k;
  }
  return MatchWhitespace(s, i);
}

}  // namespace

absl::StatusOr<SplitPattern> RecognizeSplitPattern(const std::string& regex) {
  for (SplitPattern pattern : {SplitPattern::kGpt2, SplitPattern::kQwen2, SplitPattern::kLlama3}) {
    if (regex == SplitPatternRegex(pattern)) return pattern;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported pre-tokenizer regex '", regex,
                   "' (supported: the GPT-2, Qwen2 and Llama 3 byte-level patterns)"));
}

const std::string& SplitPatternRegex(SplitPattern pattern) {
  switch (pattern) {
    case SplitPattern::kGpt2:
      return Gpt2Regex();
    case SplitPattern::kQwen2:
      return Qwen2Regex();
    case SplitPattern::kLlama3:
      return Llama3Regex();
  }
  return Qwen2Regex();
}

std::vector<absl::string_view> SplitWords(absl::string_view text, SplitPattern pattern) {
  const Chars chars = Decode(text);
  std::vector<absl::string_view> words;
  for (size_t i = 0; i < chars.size();) {
    size_t end = pattern == SplitPattern::kGpt2    ? MatchGpt2(chars, i)
                 : pattern == SplitPattern::kQwen2 ? MatchQwenStyle(chars, i, 1)
                                                   : MatchQwenStyle(chars, i, 3);
    // Every character class starts some alternative of these patterns, so a match
    // always exists; guard the loop anyway.
    if (end <= i) end = i + 1;
    words.push_back(text.substr(chars.offset[i], chars.offset[end] - chars.offset[i]));
    i = end;
  }
  return words;
}

std::vector<std::string> PreTokenize(absl::string_view text, const PreTokenizerSpec& spec) {
  std::vector<absl::string_view> pieces = {text};
  for (SplitPattern pattern : spec.splits) {
    std::vector<absl::string_view> next;
    for (absl::string_view piece : pieces) {
      for (absl::string_view word : SplitWords(piece, pattern)) next.push_back(word);
    }
    pieces.swap(next);
  }
  std::vector<std::string> words;
  words.reserve(pieces.size());
  for (absl::string_view piece : pieces) {
    std::string prefixed;
    if (spec.add_prefix_space && (piece.empty() || piece[0] != ' ')) prefixed = " ";
    prefixed.append(piece.data(), piece.size());
    if (!spec.byte_level_regex) {
      words.push_back(std::move(prefixed));
      continue;
    }
    for (absl::string_view word : SplitWords(prefixed, SplitPattern::kGpt2))
      words.emplace_back(word);
  }
  return words;
}

}  // namespace rollout::models
