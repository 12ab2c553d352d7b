// `rollout reward`: scores JSON lines from stdin with a reward function, for debugging
// reward functions.
//   rollout reward [--name gsm8k] [--output FILE] < samples.jsonl
// Input lines: {"response": ..., "ground_truth": ..., optional "prompt", "data_source",
// "extra_info" (object)}; without --name each line is routed by its data_source.
// Output, one line per input line: {"score": s, "reward": name, "extra": {...}}.
// Exit codes: 0 ok, 1 a reward function failed, 2 usage or bad input (the message
// names the line).
#pragma once

#include <string>
#include <vector>

namespace rollout::rewards {

int RunRewardCommand(const std::vector<std::string>& args);

}  // namespace rollout::rewards
