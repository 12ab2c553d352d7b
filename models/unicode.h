// UTF-8 decoding/encoding and the Unicode character classes the tokenizer needs.
//
// Text is std::string holding UTF-8. Invalid input never fails: a byte that does not
// start a valid sequence decodes as one kInvalidCodePoint of length 1, so callers
// can keep the raw byte (byte-level BPE encodes any bytes).
#pragma once

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"
#include "models/unicode_tables.h"

namespace rollout::models {

// Marks an invalid byte in DecodeUtf8's result; never a real code point.
constexpr char32_t kInvalidCodePoint = 0xFFFFFFFF;
constexpr char32_t kReplacementCharacter = 0xFFFD;

struct DecodedChar {
  char32_t code_point;  // kInvalidCodePoint for an invalid byte
  size_t length;        // bytes consumed, >= 1 (0 only at the end of `text`)
};

// The character starting at text[pos] (pos < text.size(); {kInvalidCodePoint, 0}
// at the end). Overlong forms, surrogates and values above U+10FFFF are invalid.
DecodedChar DecodeUtf8(absl::string_view text, size_t pos);

// Appends the UTF-8 encoding of `code_point` (<= U+10FFFF, not a surrogate).
void AppendUtf8(char32_t code_point, std::string* out);

// Appends `bytes` as valid UTF-8: each maximal invalid subpart becomes U+FFFD, like
// Rust's String::from_utf8_lossy (what Hugging Face tokenizers' decoders use).
// With `hold_incomplete_tail`, a trailing sequence that is a valid but unfinished
// prefix of a character is not converted; the return value is the number of bytes
// consumed (all of them otherwise). Converting a byte string in pieces, holding the
// tail each time and prepending it to the next piece, equals converting it whole.
size_t AppendUtf8Lossy(absl::string_view bytes, bool hold_incomplete_tail, std::string* out);

// True when `bytes` is entirely valid UTF-8.
bool IsValidUtf8(absl::string_view bytes);

// The pre-tokenizer class of a code point (kOther for kInvalidCodePoint).
CharClass ClassOf(char32_t code_point);
inline bool IsLetter(char32_t c) { return ClassOf(c) == CharClass::kLetter; }
inline bool IsNumber(char32_t c) { return ClassOf(c) == CharClass::kNumber; }
// The White_Space property (regex \s): \t \n \v \f \r, space, U+0085, U+00A0, ...
inline bool IsWhitespace(char32_t c) { return ClassOf(c) == CharClass::kWhitespace; }

}  // namespace rollout::models
