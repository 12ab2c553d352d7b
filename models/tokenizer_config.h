// The files next to tokenizer.json that say which tokens are special and how chats
// are formatted: tokenizer_config.json, chat_template.jinja and
// generation_config.json (each optional).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rollout::models {

struct TokenizerConfigFiles {
  // tokenizer_config.json's eos/pad/bos tokens (a plain string or an AddedToken
  // object's "content"); nullopt when the key is absent or null.
  std::optional<std::string> eos_token;
  std::optional<std::string> pad_token;
  std::optional<std::string> bos_token;
  bool pad_key_present = false;  // present with null means "none", not "look further"
  bool bos_key_present = false;

  // generation_config.json (eos_token_id may be a number or a list there).
  std::vector<int32_t> generation_eos_ids;
  std::optional<int32_t> generation_pad_id;
  std::optional<int32_t> generation_bos_id;

  // Jinja chat template text: chat_template.jinja, else tokenizer_config.json's
  // "chat_template" (a string, or a list of {name, template} where "default" is taken,
  // or the only one). nullopt when the model has none.
  std::optional<std::string> chat_template;
  std::string chat_template_origin;  // the file it came from, for messages
};

// Reads whichever of the three files exist in `dir`. InvalidArgument naming the file
// for malformed JSON or fields of the wrong type; other read errors pass through.
absl::StatusOr<TokenizerConfigFiles> ReadTokenizerConfigFiles(const std::string& dir);

}  // namespace rollout::models
