// KL divergence between the policy and the reference model, as verl's core_algos
// computes it: per-token estimators picked by name (`actor.kl_loss_type`,
// `algorithm.kl_penalty`), the KL loss, and the KL penalty folded into the rewards
// (verl's apply_kl_penalty, `algorithm.use_kl_in_reward`) with a coefficient from
// algorithms/kl_controller.h.
//
// Tensors: log-probs are [B, T] (batch, response tokens), any floating dtype, any
// device; every tensor of one call has the same shape, dtype and device. Masks are
// [B, T], any dtype, 1 for response tokens and 0 for padding. Every floating input is
// checked for NaN/Inf and reported as InvalidArgument, never propagated.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "algorithms/kl_controller.h"

namespace rollout::algorithms {

// ---- Per-token estimators ----------------------------------------------------------

// The names KlPenalty accepts, in verl's spelling (d = logprob - ref_logprob):
//   kl, k1          d
//   abs             |d|
//   mse, k2         0.5 * d^2
//   low_var_kl, k3  clamp(exp(c) - c - 1, -10, 10) with c = clamp(-d, -20, 20)
//   full            KL(p || p_ref) summed over the vocabulary (see KlPenalty)
//   <name>+         straight-through: the value of <name>, the gradient of k2 (for every
//                   name above but full; mse+ and k2+ are plain k2). k1 and k3 are
//                   unbiased for the KL's value but not for its gradient; k2 is the other
//                   way round (http://joschu.net/blog/kl-approx.html).
std::vector<std::string> KlPenaltyNames();

// Per-token KL estimate named `kl_penalty` (see KlPenaltyNames).
// logprob, ref_logprob: [B, T] log-probs of the sampled tokens under the policy and the
// reference, same shape, floating dtype and device. Returns [B, T] in their dtype, with
// gradients to both inputs (the "+" variants: k2's gradient). Nothing is masked here;
// callers mask or aggregate.
// "full" takes the whole distributions instead: [B, T, V] logits or log-probs of every
// vocabulary entry (log_softmax is applied, which leaves log-probs unchanged), and
// returns [B, T] sum_v p(v) * (log p(v) - log p_ref(v)).
// InvalidArgument: an unknown name (listing the valid ones), mismatched shapes, dtypes
// or devices, a non-floating dtype, a non-finite value.
absl::StatusOr<at::Tensor> KlPenalty(const at::Tensor& logprob, const at::Tensor& ref_logprob,
                                     absl::string_view kl_penalty);

// Reduces a per-token loss [B, T] under a mask [B, T] to a scalar, e.g. one of the
// `loss_agg_mode`s. Must keep the loss's gradient.
using TokenLossAggregator =
    std::function<absl::StatusOr<at::Tensor>(const at::Tensor& loss_mat, const at::Tensor& mask)>;

// The actor's KL loss (`actor.use_kl_loss`): KlPenalty(logprob, ref_logprob,
// kl_loss_type) reduced by `aggregate`, or by the masked mean over every response token
// when `aggregate` is empty. response_mask: [B, T]. Returns a scalar in the log-probs'
// dtype with gradients (the caller scales it by `kl_loss_coef`). Errors: KlPenalty's,
// a mask of another shape or device, the aggregator's.
absl::StatusOr<at::Tensor> KlLoss(const at::Tensor& logprob, const at::Tensor& ref_logprob,
                                  const at::Tensor& response_mask, absl::string_view kl_loss_type,
                                  const TokenLossAggregator& aggregate = nullptr);

// ---- KL in reward ------------------------------------------------------------------

struct KlInRewardResult {
  // [B, T], the scores' dtype: scores - beta * kld, kld zeroed where response_mask is 0.
  at::Tensor token_level_rewards;
  // Masked mean of kld over each sequence's tokens, then mean over the B sequences (an
  // all-masked sequence counts as 0, as in verl). The controller was updated with it.
  double current_kl = 0;
  // The beta applied to this batch: the controller's value before the update.
  double kl_coef = 0;

  // {"actor/reward_kl_penalty": current_kl, "actor/reward_kl_penalty_coeff": kl_coef}.
  std::map<std::string, double> Metrics() const;
};

// verl's apply_kl_penalty. token_level_scores, old_log_prob, ref_log_prob,
// response_mask: [B, T] (same device; the three floating tensors the same dtype), B > 0.
// kld = KlPenalty(old_log_prob, ref_log_prob, kl_penalty) * response_mask; the rewards
// carry no gradient from the log-probs (they are data, not a loss). Then
// controller.Update(current_kl, B). "full" is refused: it needs [B, T, V] distributions,
// which a rollout batch does not carry.
// InvalidArgument: KlPenalty's errors, mismatched shapes, an empty batch, Update's
// errors (the controller is then left unchanged).
absl::StatusOr<KlInRewardResult> ApplyKlPenalty(const at::Tensor& token_level_scores,
                                                const at::Tensor& old_log_prob,
                                                const at::Tensor& ref_log_prob,
                                                const at::Tensor& response_mask,
                                                absl::string_view kl_penalty,
                                                KlController& controller);

}  // namespace rollout::algorithms
