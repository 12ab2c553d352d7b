#include "common/chat_training_marks.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"

namespace rollout {

absl::StatusOr<bool> MessageTrains(const nlohmann::ordered_json& message) {
  std::optional<bool> marked;  // what the message's own keys say, if anything
  if (const auto trainable = message.find("trainable"); trainable != message.end()) {
    if (!trainable->is_boolean()) {
      return absl::InvalidArgumentError(absl::StrCat("\"trainable\" must be true or false, not ", trainable->dump()));
    }
    marked = trainable->get<bool>();
  }
  if (const auto weight = message.find("weight"); weight != message.end()) {
    if (!weight->is_number() || (*weight != 0 && *weight != 1)) {
      return absl::InvalidArgumentError(absl::StrCat("\"weight\" must be 0 or 1, not ", weight->dump()));
    }
    const bool weighted = *weight == 1;
    if (marked.has_value() && *marked != weighted) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"trainable\": ", *marked ? "true" : "false", " and \"weight\": ", weight->dump(), " disagree"));
    }
    marked = weighted;
  }
  const std::string role = message.at("role").get<std::string>();
  if (role == "assistant") return marked.value_or(true);
  if (marked.value_or(false)) {
    return absl::InvalidArgumentError(
        absl::StrCat("a ", role, " message is marked to train; only assistant messages train"));
  }
  return false;
}

}  // namespace rollout
