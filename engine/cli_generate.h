// `rollout generate`: the rollout engine from the shell.
//   rollout generate --model DIR --input prompts.jsonl [--n 8] [--temperature T]
//                    [--max_tokens N] [--greedy] [--output FILE] [--device cuda:0] ...
// Input lines: {"prompt": "text"}, {"messages": [...]} or verl's {"prompt": [...]}
// (chat messages rendered with the chat template, offering the row's "tools" if it has
// them: common/chat_json.h) or {"ids": [...]}; each may add "stop": [strings]. Output: one JSON line
// per input line, in order:
//   {"index": i, "prompt_ids": [...], "responses": [{"text", "ids", "log_probs",
//    "finish_reason"}, ...]}
// A progress bar goes to stderr. Exit codes: 0 ok, 1 failed, 2 usage or bad input.
#pragma once

#include <string>
#include <vector>

namespace rollout::engine {

int RunGenerateCommand(const std::vector<std::string>& args);

}  // namespace rollout::engine
