// A tool's result cut to rollout.multi_turn.max_tool_response_length characters
// (Unicode code points, as Python counts them) on tool_response_truncate_side, with
// verl's markers:
//   left    the first max characters + "...(truncated)"
//   right   "(truncated)..." + the last max characters
//   middle  the first max / 2 + "...(truncated)..." + the last max / 2
// A result no longer than max is kept whole. Invalid UTF-8 bytes count one each.
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace rollout::tools {

// `side` is left, right or middle (the recipe's choices); any other is middle.
std::string TruncateToolResponse(absl::string_view text, int max_characters, absl::string_view side);

}  // namespace rollout::tools
