// verl's data.filter_overlong_prompts: before a PPO run is sized, the prompts whose
// tokens (under the actor's tokenizer and chat template) exceed data.max_prompt_length
// leave the training and validation sets, instead of failing the step that draws them
// (data.truncation: error) or being cut. The controller holds no tokenizer, so a worker
// counts the tokens (worker.prompt_lengths, workers/role_host.h) before any role starts.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "controller/dataset.h"
#include "controller/worker_group.h"

namespace rollout::controller {

// Drops from `dataset` (keeping the order) every example longer than `max_prompt_length`
// tokens, counted by `group`'s rank 0; logs how many and the first, naming `what`
// ("training", "validation"). InvalidArgument naming data.filter_overlong_prompts when
// none is left; the worker's error when it cannot count.
absl::Status DropOverlongPrompts(WorkerGroup& group, int64_t max_prompt_length, const char* what,
                                 Dataset<PromptExample>* dataset);

}  // namespace rollout::controller
