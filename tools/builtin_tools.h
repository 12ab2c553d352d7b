// The tools built into rollout, by the class_name a tool config gives them
// (tools/tool_config.h):
//
//   calculator   {"expression": "(25 - 5) * 4 / 2"} -> "40": exact integer arithmetic
//                (+ - * / and parentheses, rewards/arithmetic.h); a fraction is written
//                "-5/2". A malformed expression or a division by zero is an error the
//                model sees.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "tools/tool.h"

namespace rollout::tools {

// The built-in tool `class_name`, set up with its config's object (may be empty);
// InvalidArgument naming the built-in tools otherwise.
absl::StatusOr<std::unique_ptr<Tool>> MakeBuiltinTool(const std::string& class_name,
                                                      const nlohmann::ordered_json& config);

// The class names MakeBuiltinTool takes, sorted.
std::vector<std::string> BuiltinToolNames();

}  // namespace rollout::tools
