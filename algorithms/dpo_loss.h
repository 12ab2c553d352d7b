// Direct Preference Optimization losses with TRL's DPOTrainer names and numerics
// (`loss_type`, `beta`, `label_smoothing`). With the log-ratio margin
//   logits = (policy_chosen - policy_rejected) - (reference_chosen - reference_rejected)
// the per-pair losses are
//   sigmoid  -(1 - ls) * log_sigmoid(beta * logits) - ls * log_sigmoid(-beta * logits)
//            (DPO, Rafailov et al. 2023; ls = label_smoothing > 0 is conservative DPO)
//   ipo      (logits - 1 / (2 * beta))^2                (IPO, Azar et al. 2023)
//   hinge    relu(1 - beta * logits)                    (SLiC, Zhao et al. 2023)
// and the loss is their mean over the batch.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace rollout::algorithms {

// "sigmoid", "ipo", "hinge".
std::vector<std::string> DpoLossTypes();

// TRL's DPOConfig keys and defaults.
struct DpoLossOptions {
  std::string loss_type = "sigmoid";  // one of DpoLossTypes()
  double beta = 0.1;                  // > 0; IPO's tau
  double label_smoothing = 0.0;       // in [0, 0.5]; sigmoid only

  DpoLossOptions& set_loss_type(std::string v) {
    loss_type = std::move(v);
    return *this;
  }
  DpoLossOptions& set_beta(double v) {
    beta = v;
    return *this;
  }
  DpoLossOptions& set_label_smoothing(double v) {
    label_smoothing = v;
    return *this;
  }
};

struct DpoLossResult {
  // Scalar, the inputs' dtype and device; gradients flow to all four inputs.
  at::Tensor loss;
  // [B], detached: the implicit rewards beta * (policy - reference) of each response.
  at::Tensor chosen_rewards;
  at::Tensor rejected_rewards;
  // 0-dim float64 on the inputs' device, detached (item() waits for the device):
  // the fraction of pairs with chosen_rewards > rejected_rewards (ties count as wrong),
  at::Tensor reward_accuracy;
  // and the mean of chosen_rewards - rejected_rewards.
  at::Tensor reward_margin;

  // TRL's keys: rewards/chosen and rewards/rejected (batch means), rewards/accuracies,
  // rewards/margins; 0-dim float64 tensors on the inputs' device.
  std::map<std::string, at::Tensor> Metrics() const;
};

// policy_chosen_logps, policy_rejected_logps, reference_chosen_logps,
// reference_rejected_logps: [B] (B > 0), one floating dtype and device: the sum of each
// response's token log-probs, prompt and padding excluded. (TRL feeds ipo the per-token
// mean instead of the sum; the caller decides which to pass.)
// InvalidArgument: an unknown loss_type (listing the valid ones), beta not positive and
// finite, label_smoothing outside [0, 0.5] or non-zero for ipo/hinge, shapes that are not
// one [B], mismatched dtypes or devices, a non-floating dtype, a non-finite value.
absl::StatusOr<DpoLossResult> DpoLoss(const at::Tensor& policy_chosen_logps,
                                      const at::Tensor& policy_rejected_logps,
                                      const at::Tensor& reference_chosen_logps,
                                      const at::Tensor& reference_rejected_logps,
                                      const DpoLossOptions& options = {});

}  // namespace rollout::algorithms
