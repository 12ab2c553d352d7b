// The tools built into rollout, by the class_name a tool config gives them
// (tools/tool_config.h):
//
//   calculator   {"expression": "(25 - 5) * 4 / 2"} -> "40": exact integer arithmetic
//                (+ - * / and parentheses, rewards/arithmetic.h); a fraction is written
//                "-5/2". A malformed expression or a division by zero is an error the
//                model sees.
//   gsm8k        verl's Gsm8kTool (also by its class_name verl.tools.gsm8k_tool.Gsm8kTool):
//                {"answer": "72"} -> "Current parsed answer='72' reward=1.0" (reward=0
//                when no number was found, as verl's int 0), the answer
//                ("#### " put before it unless it starts so) scored by verl's gsm8k
//                reward, flexible (rewards/builtin_rewards.h), against the trajectory's
//                create_kwargs.ground_truth (a string or an integer), which every row
//                offering it must carry (verl's extra_info.tools_kwargs). A missing
//                answer is "", any other JSON value its Python str(). Each call stands
//                alone, as in verl's tool agent loop, so its tool reward is 0 for a
//                correct answer and -0.05 otherwise (verl's penalty for an answer that
//                does not improve on the instance's best).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/tool.h"

namespace rollout::tools {

// The built-in tool `class_name`, set up with its config's object (may be empty);
// InvalidArgument naming the built-in tools otherwise.
absl::StatusOr<std::unique_ptr<Tool>> MakeBuiltinTool(const std::string& class_name,
                                                      const nlohmann::ordered_json& config);

// The class names MakeBuiltinTool takes, sorted.
std::vector<std::string> BuiltinToolNames();

// The ground truth the built-in GSM8K scorers (the gsm8k tool, the gsm8k user of
// tools/interaction.h) read from a row's kwargs: "ground_truth", a string or an integer
// (as its digits). InvalidArgument otherwise, saying that `scorer` ("the gsm8k tool
// scores answers") needs it.
absl::StatusOr<std::string> Gsm8kGroundTruth(const nlohmann::ordered_json& kwargs, absl::string_view scorer);

}  // namespace rollout::tools
