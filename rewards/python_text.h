// Python's string semantics over UTF-8 text, for reward functions that reproduce verl's
// Python rules exactly: Python indexes and slices strings by code point, its `\s` and
// str.strip() know Unicode whitespace, and str.isdigit() Unicode digits.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "re2/re2.h"

namespace rollout::rewards {

// Whether byte `c` continues a UTF-8 code point (10xxxxxx) rather than starting one.
inline bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The first code point of non-empty UTF-8 `text`.
absl::string_view FirstCodePoint(absl::string_view text);

// len(text) in Python: the number of code points.
size_t CodePointCount(absl::string_view text);

// text[-n:] in Python: the last `n` code points (all of `text` when shorter).
absl::string_view LastCodePoints(absl::string_view text, size_t n);

// re.findall(pattern, text) for a pattern with one capture group: that group of every
// match, in order. RE2's leftmost-first matching picks the same matches as Python's.
std::vector<std::string> FindAll(const RE2& re, absl::string_view text);

// An RE2 character class of exactly the characters of Python's `\s` in a str pattern
// (str.isspace()); RE2's own `\s` is ASCII [\t\n\f\r ].
inline constexpr absl::string_view kPythonSpaceClass =
    "[\\t\\n\\x{0b}\\f\\r \\x{1c}-\\x{1f}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}"
    "\\x{2029}\\x{202f}\\x{205f}\\x{3000}]";

// text.strip() in Python: `text` without leading and trailing str.isspace() characters.
absl::string_view PythonStrip(absl::string_view text);

// text.isdigit() in Python for the digits answers use: non-empty, and every code point
// an ASCII, fullwidth, Arabic-Indic or Devanagari digit, a superscript or subscript
// digit, or a circled digit 1-9. (Python also counts the digits of other scripts.)
bool IsPythonDigits(absl::string_view text);

}  // namespace rollout::rewards
