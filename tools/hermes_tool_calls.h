// Tool calls in a model's reply as Hermes writes them (rollout.multi_turn.format:
// hermes; Qwen2.5's and Qwen3's templates teach it):
//
//   Let me compute it.
//   <tool_call>
//   {"name": "calculator", "arguments": {"expression": "3 * 7"}}
//   </tool_call>
//
// Each <tool_call>...</tool_call> holds one JSON object with a string "name" and an
// "arguments" object (or that object's JSON text). A block that does not parse is
// skipped, as verl's hermes parser skips it; an unclosed block is no call.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "models/chat_template.h"

namespace rollout::tools {

struct HermesToolCalls {
  std::vector<models::ChatToolCall> calls;  // in the reply's order
  int malformed = 0;                        // blocks skipped
};

HermesToolCalls ParseHermesToolCalls(absl::string_view reply);

}  // namespace rollout::tools
