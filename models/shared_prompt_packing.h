// verl's scoring layout — each row a left-padded prompt followed by a right-padded
// R-token response, [B, T] — packed for a forward without padding in which every run of
// consecutive rows with the same prompt (GRPO's n responses to a prompt) computes that
// prompt once: the prompt is a segment of its own, listed as the key prefix of each of
// its rows' response segments (models/packed_attention.h). A response's last token
// predicts nothing that is scored, so it is left out.
//
// Scores equal those of CausalLM::Forward on the padded batch up to rounding; the model
// sees sum over prompts of their tokens plus sum over rows of (response length - 1)
// tokens instead of B * T.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>

#include "models/packed_attention.h"

namespace rollout::models {

struct SharedPromptPacking {
  // The forward's N tokens, on the batch's device: each prompt group's prompt tokens,
  // then the response tokens (all but the last) of each of its rows.
  at::Tensor input_ids;  // [N] int64
  at::Tensor positions;  // [N] int64, the batch's position_ids of those tokens
  PackedSegmentAttention attention;
  // The M response tokens present (attention_mask 1): the row of the forward's [N, H]
  // hidden states that predicts each (its row's last prompt token's for the first), its
  // id, and its place b * R + i in the [B, R] responses. [M] int64, on the device.
  at::Tensor score_rows, score_targets, score_slots;
  int64_t prompt_groups = 0;  // prompts computed once each
};

// input_ids, attention_mask, position_ids [B, T]; the last `response_length` columns are
// the responses. The packing's tensors go to `device`. nullopt when some row is not one
// run of at least one prompt token ending at column T - R followed by one run of
// response tokens (possibly empty) starting there; such a batch needs
// CausalLM::Forward. Reads the batch on the host: device tensors are copied there,
// which waits for the work queued before.
std::optional<SharedPromptPacking> PackSharedPrompts(const at::Tensor& input_ids,
                                                     const at::Tensor& attention_mask,
                                                     const at::Tensor& position_ids,
                                                     int64_t response_length, c10::Device device);

}  // namespace rollout::models
