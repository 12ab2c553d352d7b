// The tokenizer files of an HF model directory, for code that writes a model
// directory of its own (`rollout init-model`, a checkpoint's hf_model) and must put
// the tokenizer next to the weights so that HF tools load it.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace rollout::models {

// Copies those of tokenizer.json, tokenizer_config.json, chat_template.jinja,
// special_tokens_map.json, vocab.json and merges.txt that exist in `from_dir` into
// `to_dir` (which must exist), each file written atomically and fsynced. Errors name
// the file.
absl::Status CopyTokenizerFiles(const std::string& from_dir, const std::string& to_dir);

}  // namespace rollout::models
