// Which messages of an SFT or DPO conversation the loss trains on, as a data row marks
// them: every assistant message, unless it says otherwise with verl's multi-turn SFT key
// ("trainable": false) or the OpenAI fine-tuning format's ("weight": 0); system and user
// messages never train. The controller checks the marks as it loads rows (so that a bad
// row is reported at its file and line, or skipped with data.skip_bad_rows); the workers
// apply them as they encode conversations (workers/conversation_sft.h).
#pragma once

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace rollout {

// Whether `message` (a JSON object with a string "role") trains. InvalidArgument for a
// "trainable" that is not a boolean, a "weight" other than 0 or 1, marks that disagree,
// or a system or user message marked to train.
absl::StatusOr<bool> MessageTrains(const nlohmann::ordered_json& message);

}  // namespace rollout
