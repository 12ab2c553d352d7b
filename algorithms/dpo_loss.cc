#include "algorithms/dpo_loss.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "algorithms/masked_ops.h"
#include "common/status_macros.h"

namespace rollout::algorithms {
namespace {

absl::Status CheckOptions(const DpoLossOptions& options) {
  const std::vector<std::string> types = DpoLossTypes();
  if (std::find(types.begin(), types.end(), options.loss_type) == types.end()) {
    return absl::InvalidArgumentError(absl::StrCat("DPO loss_type: unknown '", options.loss_type,
                                                   "'; valid: ", absl::StrJoin(types, ", ")));
  }
  if (!std::isfinite(options.beta) || options.beta <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("DPO beta must be positive and finite; got ", options.beta));
  }
  if (!(options.label_smoothing >= 0 && options.label_smoothing <= 0.5)) {
    return absl::InvalidArgumentError(
        absl::StrCat("DPO label_smoothing must be in [0, 0.5]; got ", options.label_smoothing));
  }
  if (options.label_smoothing != 0 && options.loss_type != "sigmoid") {
    return absl::InvalidArgumentError(
        absl::StrCat("DPO label_smoothing applies to loss_type sigmoid only; got label_smoothing ",
                     options.label_smoothing, " with loss_type ", options.loss_type));
  }
  return absl::OkStatus();
}

// All four are defined, floating, finite, and one [B] (B > 0) of one dtype and device.
absl::Status CheckLogps(const std::array<std::pair<const at::Tensor*, const char*>, 4>& inputs) {
  const at::Tensor& first = *inputs[0].first;
  for (const auto& [t, name] : inputs) {
    if (!t->defined()) return absl::InvalidArgumentError(absl::StrCat(name, ": undefined tensor"));
    if (!at::isFloatingType(t->scalar_type())) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": needs a floating dtype; got ", c10::toString(t->scalar_type())));
    }
    if (t->dim() != 1 || t->size(0) == 0 || t->sizes() != first.sizes()) {
      return absl::InvalidArgumentError(
          absl::StrCat("DPO log-probs must all be one non-empty [B]; ", name, " is [",
                       absl::StrJoin(t->sizes(), ", "), "] and ", inputs[0].second, " is [",
                       absl::StrJoin(first.sizes(), ", "), "]"));
    }
    if (t->scalar_type() != first.scalar_type() || t->device() != first.device()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "DPO log-probs must share one dtype and device; ", name, " is ",
          c10::toString(t->scalar_type()), " on ", t->device().str(), " and ", inputs[0].second,
          " is ", c10::toString(first.scalar_type()), " on ", first.device().str()));
    }
    RETURN_IF_ERROR(CheckFinite(*t, name));
  }
  return absl::OkStatus();
}

// Per-pair losses [B] for the margin `logits` [B].
at::Tensor PairLosses(const at::Tensor& logits, const DpoLossOptions& options) {
  const double beta = options.beta;
  if (options.loss_type == "ipo") return (logits - 1 / (2 * beta)).square();
  if (options.loss_type == "hinge") return at::relu(1 - beta * logits);
  const double smoothing = options.label_smoothing;
  return -(1 - smoothing) * at::log_sigmoid(beta * logits) -
         smoothing * at::log_sigmoid(-beta * logits);
}

}  // namespace

std::vector<std::string> DpoLossTypes() { return {"sigmoid", "ipo", "hinge"}; }

std::map<std::string, at::Tensor> DpoLossResult::Metrics() const {
  return {{"rewards/chosen", chosen_rewards.to(at::kDouble).mean()},
          {"rewards/rejected", rejected_rewards.to(at::kDouble).mean()},
          {"rewards/accuracies", reward_accuracy},
          {"rewards/margins", reward_margin}};
}

absl::StatusOr<DpoLossResult> DpoLoss(const at::Tensor& policy_chosen_logps,
                                      const at::Tensor& policy_rejected_logps,
                                      const at::Tensor& reference_chosen_logps,
                                      const at::Tensor& reference_rejected_logps,
                                      const DpoLossOptions& options) {
  RETURN_IF_ERROR(CheckOptions(options));
  RETURN_IF_ERROR(CheckLogps({{{&policy_chosen_logps, "policy_chosen_logps"},
                               {&policy_rejected_logps, "policy_rejected_logps"},
                               {&reference_chosen_logps, "reference_chosen_logps"},
                               {&reference_rejected_logps, "reference_rejected_logps"}}}));
  const at::Tensor chosen_log_ratio = policy_chosen_logps - reference_chosen_logps;
  const at::Tensor rejected_log_ratio = policy_rejected_logps - reference_rejected_logps;
  const at::Tensor logits = chosen_log_ratio - rejected_log_ratio;

  DpoLossResult result;
  result.loss = PairLosses(logits, options).mean();
  result.chosen_rewards = (options.beta * chosen_log_ratio).detach();
  result.rejected_rewards = (options.beta * rejected_log_ratio).detach();
  const at::Tensor margins = (result.chosen_rewards - result.rejected_rewards).to(at::kDouble);
  result.reward_accuracy = result.chosen_rewards.gt(result.rejected_rewards).to(at::kDouble).mean();
  result.reward_margin = margins.mean();
  return result;
}

}  // namespace rollout::algorithms
