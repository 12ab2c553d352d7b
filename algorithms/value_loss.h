// PPO's clipped value-function loss for the critic (verl's compute_value_loss).
//
// Inputs, all [B, T] on one device:
//   vpreds         floating; the critic's current predictions (gradients flow here)
//   returns        floating; regression targets (e.g. GAE advantages + values)
//   old_values     floating; the critic's predictions when the batch was collected
//                  (verl's `values`), the centre of the clip interval
//   response_mask  any dtype; 1 for tokens that count, 0 for padding. Masked tokens
//                  change neither the loss, its gradients, nor vf_clipfrac.
// Every floating input must be finite, masked positions included.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "absl/status/statusor.h"

namespace rollout::algorithms {

// verl's critic keys and defaults.
struct ValueLossOptions {
  // Predictions may move at most this far from old_values before the clipped term
  // takes over.
  double cliprange_value = 0.5;
  std::string loss_agg_mode = "token-mean";  // see loss_aggregation.h
  double loss_scale_factor = 0;              // seq-mean-token-sum-norm's horizon; 0: T
};

struct ValueLossResult {
  // 0-dim, the inputs' promoted dtype, on their device; differentiable w.r.t. vpreds.
  at::Tensor loss;
  // Masked fraction of tokens whose clipped error was strictly the larger: 0-dim float64
  // on the inputs' device, outside the autograd graph (item() waits for the device).
  at::Tensor vf_clipfrac;
};

// Per token, with c = cliprange_value: clipped = old_values + clamp(vpreds - old_values,
// -c, c), evaluated as clamp(vpreds, old_values - c, old_values + c) so that it equals
// vpreds exactly inside the interval; l = max((vpreds - returns)^2, (clipped - returns)^2);
// loss = 0.5 * aggregate(l) with loss_agg_mode. InvalidArgument naming the problem for a negative
// or NaN cliprange_value, an unknown loss_agg_mode, or inputs that fail CheckTokenLossInputs
// (shape, dtype, device, NaN / Inf).
absl::StatusOr<ValueLossResult> ComputeValueLoss(const at::Tensor& vpreds,
                                                 const at::Tensor& returns,
                                                 const at::Tensor& old_values,
                                                 const at::Tensor& response_mask,
                                                 const ValueLossOptions& options);

}  // namespace rollout::algorithms
