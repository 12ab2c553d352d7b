// verl's generation dumps (trainer.rollout_data_dir, trainer.validation_data_dir): the
// responses of one training step, or of one validation, as JSON lines in
// <dir>/<step>.jsonl, one object a response with verl's keys in verl's order —
//   {"input": "...", "output": "...", "gts": "...", "score": 1.0, "step": 3, "acc": 1.0}
// input is the prompt as the model saw it (its tokens decoded, special tokens skipped),
// output the response text, gts the ground truth (a JSON object or array as JSON, any
// other value as the string the data gave), score the reward (after DAPO's overlong
// shaping for a training step, as token_level_scores), then the reward's extra values
// (verl's reward_extra_info). Text that is not valid UTF-8 (a response cut inside a
// character) is written with U+FFFD in place of the bad bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/batch.h"
#include "controller/dataset.h"
#include "controller/metric_sink.h"
#include "rewards/reward_runner.h"

namespace rollout::controller {

struct GenerationRecord {
  std::string input;
  std::string output;
  std::string ground_truth;  // as PromptExample::ground_truth
  double score = 0;
  std::map<std::string, double> extra;
};

// One record's line (no newline).
std::string GenerationDumpLine(const GenerationRecord& record, int64_t step);

// Replaces <dir>/<step>.jsonl with the records' lines, atomically (a crash leaves the
// old file or the new one); creates `dir` when missing. Errors name the file.
absl::Status WriteGenerationDump(const std::string& dir, int64_t step,
                                 const std::vector<GenerationRecord>& records);

// trainer.log_val_generations: `count` of a validation's records for the loggers,
// chosen as verl chooses them — ordered by input (stably), then shuffled with a fixed
// seed — so each validation of a run shows the same prompts' latest responses.
std::vector<GenerationSample> GenerationsToLog(const std::vector<GenerationRecord>& records, int count);

// The columns a training step's rollout batch carries for its dump, added to `batch`
// (rows prompt-major, `n` a prompt, as `scored`): strings ground_truth and
// reward_extra (the sample's extra values as a JSON object).
absl::Status AddGenerationDumpColumns(const std::vector<const PromptExample*>& examples, int n,
                                      const std::vector<rewards::ScoredSample>& scored, Batch* batch);

// A training step's records from its batch: strings prompt_text (the rollout's, asked
// for with meta with_prompt_text), response_text and AddGenerationDumpColumns' columns;
// the score is the row's token_level_scores summed.
absl::StatusOr<std::vector<GenerationRecord>> GenerationRecordsOf(const Batch& batch);

}  // namespace rollout::controller
