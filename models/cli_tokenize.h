// `rollout tokenize`: the model's tokenizer as a JSON-lines filter, for checking
// prompts and ids against Hugging Face from the shell.
#pragma once

#include <string>
#include <vector>

namespace rollout::models {

// rollout tokenize --tokenizer DIR [--decode | --chat] [...]; `args` follow the
// subcommand name. Reads JSON lines on stdin, writes one JSON line per input line:
//   default   {"text": "..."} or "..."          -> {"ids": [...]}
//   --decode  {"ids": [...]} or [...]           -> {"text": "..."}
//   --chat    {"messages": [...]} or [...]      -> {"text": prompt, "ids": [...]}
//             ({"messages": [...], "tools": [...]} offers tools: models/json_prompt.h)
// Blank lines are skipped. Returns 0 on success, 1 at the first bad input line (the
// message names its number), 2 for usage errors (flags, a tokenizer that does not
// load, --chat without a usable prompt format).
int RunTokenizeCommand(const std::vector<std::string>& args);

}  // namespace rollout::models
