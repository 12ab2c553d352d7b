// Model subcommands of `rollout` (exit codes as in controller/cli.h: 0 ok, 1 failed,
// 2 usage).
//   rollout init-model --out DIR --tokenizer DIR [--preset tiny|qwen2.5-0.5b|qwen3-0.6b] [--seed N]
//       writes a randomly initialised HF model directory for that tokenizer, so tests
//       and demos never need a download.
//   rollout score --model DIR --input FILE.jsonl [--output FILE] [--device ...]
//       per-token log-probs of each line's `ids` (or `text`) as JSON lines.
#pragma once

#include <string>
#include <vector>

namespace rollout::models {

int RunInitModelCommand(const std::vector<std::string>& args);
int RunScoreCommand(const std::vector<std::string>& args);

}  // namespace rollout::models
