// Scores of a batch's response tokens under a causal LM, for every role that trains or
// scores a policy (actor, ref, SFT, DPO). verl's layout: each row is a left-padded
// prompt followed by an R-token right-padded response, so the hidden states of the R
// positions before the response's tokens predict them.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "models/causal_lm.h"
#include "models/token_scores.h"
#include "workers/policy_batch.h"

namespace rollout::workers {

// input_ids, position_ids, attention_mask [B, T]; responses [B, R] (0 < R < T), the last
// R columns of input_ids. [B, R] float32 log-probs (entropies when asked), with logits
// divided by `temperature`; differentiable when grad mode is on.
models::TokenScores ScoreResponses(const models::CausalLM& model, const at::Tensor& input_ids,
                                   const at::Tensor& position_ids, const at::Tensor& attention_mask,
                                   const at::Tensor& responses, bool with_entropy,
                                   double temperature = 1.0);

// ScoreResponses over a whole PolicyBatch, `micro_batch_rows` rows at a time, without
// gradients: [B, R] float32 log-probs (and entropies when asked). InvalidArgument for a
// batch that does not fit (CheckPolicyBatch) or micro_batch_rows < 1.
absl::StatusOr<models::TokenScores> ScoreResponsesNoGrad(const models::CausalLM& model,
                                                         const PolicyBatch& batch,
                                                         int64_t micro_batch_rows,
                                                         bool with_entropy,
                                                         double temperature = 1.0);

}  // namespace rollout::workers
