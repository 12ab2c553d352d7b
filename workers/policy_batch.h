// A batch of sequences for the roles that score or train a policy (actor, ref, SFT,
// DPO), in verl's layout: a left-padded prompt followed by a right-padded response.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/batch.h"

namespace rollout::workers {

// One batch of sequences: a left-padded prompt followed by a right-padded response.
struct PolicyBatch {
  at::Tensor input_ids;       // [B, T] int64
  at::Tensor attention_mask;  // [B, T] 1 for tokens, 0 for padding
  at::Tensor position_ids;    // [B, T] int64
  at::Tensor responses;       // [B, R] int64, the last R columns of input_ids
  at::Tensor response_mask;   // [B, R] 1 for response tokens that count
  // For the actor's update only, [B, R] floating:
  at::Tensor old_log_probs;  // under the policy that generated the responses
  at::Tensor advantages;
  at::Tensor ref_log_probs;  // required with use_kl_loss
  // Optional (column rollout_is_weights): each token's policy-gradient weight,
  // algorithm.rollout_correction's importance weights.
  at::Tensor rollout_is_weights;
};

// OK when the tensors fit together: [B, T] input_ids, attention_mask and position_ids,
// [B, R] responses and response_mask with 0 < R < T, and with `for_update` the [B, R]
// old_log_probs and advantages (and ref_log_probs with `needs_ref`, and
// rollout_is_weights when defined). Otherwise
// InvalidArgument naming the first tensor that does not fit.
absl::Status CheckPolicyBatch(const PolicyBatch& batch, bool for_update = false,
                              bool needs_ref = false);

// The PolicyBatch of a Batch's columns with verl's names: input_ids, attention_mask,
// position_ids, responses, response_mask, and with `for_update` old_log_probs and
// advantages (+ ref_log_prob with `needs_ref`, + rollout_is_weights when the batch has
// it). NotFound naming a missing column;
// CheckPolicyBatch's errors.
absl::StatusOr<PolicyBatch> PolicyBatchFromColumns(const Batch& batch, bool for_update = false,
                                                   bool needs_ref = false);

// Every defined tensor of `batch` on `device` (a no-op for those already there).
PolicyBatch MoveTo(const PolicyBatch& batch, c10::Device device);

// Rows [start, start + length) of every tensor of `batch` (undefined ones stay undefined).
PolicyBatch SliceRows(const PolicyBatch& batch, int64_t start, int64_t length);

// Rows `order` of every tensor of `batch`, in that order (ReorderRows).
PolicyBatch ReorderRows(const PolicyBatch& batch, const std::vector<int64_t>& order);

}  // namespace rollout::workers
