// The rollout's results in verl's batch layout, as `rollout.generate_sequences` returns
// them to the controller: for each prompt its samples (rows prompt-major: p0s0, p0s1,
// ..., as verl's repeat(interleave=True)), each row a prompt left-padded to
// max_prompt_length followed by the response right-padded to max_response_length.
//   prompts            [N, P] int64      responses          [N, R] int64
//   input_ids          [N, P + R] int64  attention_mask     [N, P + R] int64 (1: token)
//   position_ids       [N, P + R] int64  response_mask      [N, R] int64 (1: generated)
//   rollout_log_probs  [N, R] float32 (0 where masked)
//   strings: response_text (decoded response), finish_reason ("stop", "length", ...)
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "common/batch.h"
#include "engine/engine.h"

namespace rollout::workers {

struct RolloutLayout {
  int64_t max_prompt_length = 512;    // P
  int64_t max_response_length = 512;  // R
  int32_t pad_token_id = 0;
};

// `prompts[i]` produced `outputs[i]`. InvalidArgument naming the prompt or sample that
// exceeds its length.
absl::StatusOr<Batch> BuildRolloutBatch(const std::vector<std::vector<int32_t>>& prompts,
                                        const std::vector<engine::RequestOutput>& outputs,
                                        const RolloutLayout& layout);

}  // namespace rollout::workers
