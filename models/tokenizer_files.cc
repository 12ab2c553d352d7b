#include "models/tokenizer_files.h"

#include "absl/status/statusor.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace rollout::models {
namespace {

constexpr const char* kTokenizerFiles[] = {"tokenizer.json",      "tokenizer_config.json",
                                           "chat_template.jinja", "special_tokens_map.json",
                                           "vocab.json",          "merges.txt"};

}  // namespace

absl::Status CopyTokenizerFiles(const std::string& from_dir, const std::string& to_dir) {
  for (const char* name : kTokenizerFiles) {
    absl::StatusOr<std::string> contents = ReadFile(JoinPath(from_dir, name));
    if (absl::IsNotFound(contents.status())) continue;
    if (!contents.ok()) return contents.status();
    RETURN_IF_ERROR(WriteFileAtomically(JoinPath(to_dir, name), *contents));
  }
  return absl::OkStatus();
}

}  // namespace rollout::models
