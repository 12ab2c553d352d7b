// Pre-tokenizer word splitters: hand-written matchers equivalent to the regexes of
// Hugging Face tokenizer.json files (RE2 has no lookahead, and a matcher is faster).
//
//   kGpt2   ByteLevel(use_regex) and GPT-2's pattern:
//           's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   kQwen2  Split regex of Qwen2 / Qwen2.5:
//           (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|
//           ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   kLlama3 the same with \p{N}{1,3} (digits in groups of up to three)
//
// Splitting behaves like tokenizers' Split with behavior "Isolated": every match is
// a word and so is any text between matches, so the words always concatenate back to
// the input. Alternatives are tried in order at each position (first match wins, not
// the longest), with the backtracking the regex engine would do.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::models {

enum class SplitPattern { kGpt2, kQwen2, kLlama3 };

// The splitter for a regex string as written in tokenizer.json; InvalidArgument
// quoting the pattern when it is none of the three above.
absl::StatusOr<SplitPattern> RecognizeSplitPattern(const std::string& regex);

// The regex string of `pattern` (as tokenizer.json spells it).
const std::string& SplitPatternRegex(SplitPattern pattern);

// The pre-tokenization of a byte-level tokenizer.json: Split steps, then ByteLevel.
struct PreTokenizerSpec {
  std::vector<SplitPattern> splits;  // Split steps, in order, each on every piece so far
  bool add_prefix_space = false;     // ByteLevel: " " before each piece not starting with it
  bool byte_level_regex = false;     // ByteLevel use_regex: then split with kGpt2
};

// The words of `text` (raw bytes, before the byte-to-character mapping) under `spec`.
std::vector<std::string> PreTokenize(absl::string_view text, const PreTokenizerSpec& spec);

// Splits `text` (UTF-8; invalid bytes count as characters of no class) into words
// that view into `text`. Empty text gives no words.
std::vector<absl::string_view> SplitWords(absl::string_view text, SplitPattern pattern);

}  // namespace rollout::models
