// `rollout gen-data`: writes a generated task dataset as JSON lines (see
// data/task_generators.h for the tasks).
//
//   rollout gen-data arithmetic --out data/arith [--train 5000] [--val 500] [--seed 1]
//       [--min_digits 2] [--max_digits 2] [--operators +-]
//   rollout gen-data countdown --out data/countdown [--train N] [--val N] [--seed S]
//       [--min_numbers 3] [--max_numbers 4] [--max_number 99] [--max_target 999]
//
// Files written in DIR, each atomically (the old file or the new one, never a mix),
// one JSON object per line, loadable with controller/dataset.h:
//   train.jsonl, val.jsonl          prompt rows {"prompt", "data_source",
//                                   "ground_truth", "extra_info": {"split", "index"}}
//   sft_train.jsonl, sft_val.jsonl  SFT pairs {"prompt", "response"}
//   dpo_train.jsonl, dpo_val.jsonl  preference rows {"prompt", "chosen", "rejected"}
// The SFT and preference files hold the same problems as train.jsonl / val.jsonl,
// which share none. Exit codes: 0 ok, 2 bad usage or options, 1 a file could not be
// written.
#pragma once

#include <string>
#include <vector>

namespace rollout::data {

// `args` are the arguments after "gen-data".
int RunGenDataCommand(const std::vector<std::string>& args);

}  // namespace rollout::data
