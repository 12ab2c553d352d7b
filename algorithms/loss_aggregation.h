// Reduction of a token-level loss matrix to the scalar the optimizer differentiates,
// selected by verl's `loss_agg_mode` (verl's agg_loss), and the input checks every
// token-level loss shares.
//
// Shapes: `loss_mat` and `loss_mask` are [B, T] (B sequences, T response positions).
// `loss_mask` is 1 for tokens that count and 0 for padding (any dtype; converted to the
// loss's dtype). A row whose mask is all 0 is "empty": it contributes nothing, and the
// seq-mean modes leave it out of their sequence count, so appending empty rows never
// changes a loss. Every mode gives 0 (with zero gradients) when nothing is selected.
#pragma once

#include <ATen/core/Tensor.h>

#include <initializer_list>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::algorithms {

// Modes, with m the mask, l the loss, n_b = sum_t m[b, t] and E the empty rows:
//   token-mean               sum(l * m) / sum(m)                 (every token weighs the same)
//   seq-mean-token-sum       mean over b not in E of sum_t(l * m)[b]
//   seq-mean-token-mean      mean over b not in E of sum_t(l * m)[b] / n_b
//   seq-mean-token-sum-norm  sum(l * m) / horizon              (Dr. GRPO; a sum over the
//                            batch, not a mean, exactly as verl)
// `loss_scale_factor` is the horizon of seq-mean-token-sum-norm (verl's key of that name);
// 0 uses T = loss_mask.size(1), verl's default. Pass a constant (e.g.
// data.max_response_length) so the normalisation does not move with the padded length of
// each micro-batch. Other modes ignore it.
//
// Returns a 0-dim tensor in loss_mat's dtype and device, differentiable w.r.t. loss_mat.
// InvalidArgument on an unknown mode (the message lists the valid ones), inputs that fail
// CheckTokenLossInputs, or a negative / non-finite loss_scale_factor.
absl::StatusOr<at::Tensor> AggregateLoss(const at::Tensor& loss_mat, const at::Tensor& loss_mask,
                                         absl::string_view loss_agg_mode,
                                         double loss_scale_factor = 0);

// OK when `mask` is [B, T] (any dtype; finite when floating) and every (name, tensor) in
// `tensors` is floating, shaped and placed like `mask`, and finite. Otherwise
// InvalidArgument naming the first offending tensor, e.g. "advantages: shape [2, 3] does
// not match response_mask [2, 4]" or "log_prob: 1 NaN and 0 infinite values (first at
// [0, 2])". Synchronises with the device (CheckFinite).
absl::Status CheckTokenLossInputs(
    const at::Tensor& mask, const std::string& mask_name,
    std::initializer_list<std::pair<std::string, at::Tensor>> tensors);

}  // namespace rollout::algorithms
