// Unicode Normalization Form C (canonical decomposition, then canonical
// composition), the `NFC` normalizer of Hugging Face tokenizers (Qwen2 uses it).
// Tables come from scripts/gen_unicode_tables.py (python3's Unicode version).
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace rollout::models {

// `text` in NFC. Bytes that are not valid UTF-8 are kept as they are and separate
// the runs normalized around them. Characters NFC can never change in any context
// (ASCII, Latin-1, CJK ideographs, Hangul syllables, ...) are copied without work.
std::string NfcNormalize(absl::string_view text);

}  // namespace rollout::models
