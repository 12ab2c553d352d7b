// Scores of a batch's response tokens under a causal LM, for every role that trains or
// scores a policy (actor, ref, SFT, DPO). verl's layout: each row is a left-padded
// prompt followed by an R-token right-padded response, so the hidden states of the R
// positions before the response's tokens predict them.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "models/causal_lm.h"
#include "models/shared_prompt_packing.h"
#include "models/token_scores.h"
#include "workers/micro_batches.h"
#include "workers/policy_batch.h"

namespace rollout::workers {

// Whether scoring computes each prompt once for every run of consecutive rows that
// share it, without padding (models/shared_prompt_packing.h): the same scores up to
// rounding, from fewer tokens when responses come n to a prompt (GRPO) or carry padding.
//   kWhereFast: where attention over packed segments takes the flash kernel (half
//               precision on CUDA); elsewhere each segment is attended on its own,
//               slower than the padded batch.
enum class PromptSharing { kNever, kWhereFast, kAlways };

// input_ids, position_ids, attention_mask [B, T]; responses [B, R] (0 < R < T), the last
// R columns of input_ids. [B, R] float32 log-probs (and the `extras`), with logits
// divided by `temperature`; differentiable when grad mode is on. Positions whose
// attention_mask is 0 hold 0 when the prompts are shared, unspecified finite values
// otherwise. Batches whose rows are not a prompt run then a response run are scored
// padded whatever `sharing` says.
models::TokenScores ScoreResponses(const models::CausalLM& model, const at::Tensor& input_ids,
                                   const at::Tensor& position_ids, const at::Tensor& attention_mask,
                                   const at::Tensor& responses, models::ScoreExtras extras,
                                   double temperature = 1.0,
                                   PromptSharing sharing = PromptSharing::kWhereFast);

// The packing ScoreResponses would score `input_ids`'s rows through when `sharing`
// applies to the model (nullopt where it does not, or where the rows do not fit:
// ScoreResponses then scores them padded). Host tensors are read without waiting for
// the device, so callers that score micro-batches pack them from one host copy of the
// batch and the forwards queue back to back.
std::optional<models::SharedPromptPacking> PackForScoring(const models::CausalLM& model,
                                                          const at::Tensor& input_ids,
                                                          const at::Tensor& attention_mask,
                                                          const at::Tensor& position_ids,
                                                          int64_t response_length,
                                                          PromptSharing sharing);

// ScoreResponses of the `rows` rows `packed` (from PackForScoring) holds.
models::TokenScores ScorePackedResponses(const models::CausalLM& model,
                                         models::SharedPromptPacking& packed, int64_t rows,
                                         int64_t response_length, models::ScoreExtras extras,
                                         double temperature = 1.0);

// ScoreResponses over a whole PolicyBatch, one micro-batch (micro_batches.h) at a time,
// without gradients: [B, R] float32 log-probs (and the `extras`).
// InvalidArgument for a batch that does not fit (CheckPolicyBatch), a micro-batch size
// below one row or a negative budget, or a row over the budget.
absl::StatusOr<models::TokenScores> ScoreResponsesNoGrad(const models::CausalLM& model,
                                                         const PolicyBatch& batch,
                                                         const MicroBatchSize& micro_batch,
                                                         models::ScoreExtras extras,
                                                         double temperature = 1.0,
                                                         PromptSharing sharing =
                                                             PromptSharing::kWhereFast);

}  // namespace rollout::workers
