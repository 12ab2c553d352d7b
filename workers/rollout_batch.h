// The rollout's results in verl's batch layout, as `rollout.generate_sequences` returns
// them to the controller: for each prompt its samples (rows prompt-major: p0s0, p0s1,
// ..., as verl's repeat(interleave=True)), each row a prompt left-padded to
// max_prompt_length followed by the response right-padded to max_response_length.
//   prompts            [N, P] int64      responses          [N, R] int64
//   input_ids          [N, P + R] int64  attention_mask     [N, P + R] int64 (1: token)
//   position_ids       [N, P + R] int64  response_mask      [N, R] int64 (1: generated)
//   rollout_log_probs  [N, R] float32 (0 where masked)
//   strings: response_text (decoded response), finish_reason ("stop", "length", ...)
// and, for multi-turn responses (workers/multi_turn_rollout.h), num_turns [N] int64:
// verl's count of a conversation's turns (the prompt, the model's turns and the tools'
// turns), and the string columns tool_rewards and turn_scores: each row's tool calls'
// rewards and simulated user turns' scores as JSON lists. A tool turn's tokens are in attention_mask but not in response_mask.
#pragma once

#include <cstdint>
#include <string>
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

// One sample's response: what the model generated and, in a multi-turn rollout, the
// tools' turns between its own.
struct RolloutResponse {
  std::vector<int32_t> tokens;
  std::vector<float> log_probs;   // per token; 0 for a tool turn's
  std::vector<bool> generated;    // per token: the model's (not a tool turn's); empty: all are
  std::string text;               // decoded, special tokens skipped
  std::string finish_reason;      // of the model's last turn
  int32_t num_turns = 0;          // 0: a single-turn rollout (no num_turns column)
  std::vector<double> tool_rewards;  // multi-turn: each tool call's reward, in call order
  std::vector<double> turn_scores;   // multi-turn: each simulated user turn's score
};

// The engine's samples as responses, per request.
std::vector<std::vector<RolloutResponse>> ResponsesOf(const std::vector<engine::RequestOutput>& outputs);

// `prompts[i]` produced `responses[i]` (its samples). InvalidArgument naming the prompt
// or sample that exceeds its length.
absl::StatusOr<Batch> BuildRolloutBatch(const std::vector<std::vector<int32_t>>& prompts,
                                        const std::vector<std::vector<RolloutResponse>>& responses,
                                        const RolloutLayout& layout);

}  // namespace rollout::workers
