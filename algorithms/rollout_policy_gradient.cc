#include "algorithms/rollout_policy_gradient.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include "algorithms/loss_aggregation.h"
#include "algorithms/masked_ops.h"
#include "common/status_macros.h"

namespace rollout::algorithms {

absl::StatusOr<RolloutPolicyGradient> ComputeRolloutPolicyGradient(const at::Tensor& rollout_log_prob,
                                                                   const at::Tensor& log_prob,
                                                                   const at::Tensor& advantages,
                                                                   const at::Tensor& response_mask,
                                                                   const RolloutPolicyGradientOptions& options) {
  constexpr char kContext[] = "rollout-correction policy gradient";
  RETURN_IF_ERROR(WithContext(CheckTokenLossInputs(response_mask, "response_mask",
                                                   {{"rollout_log_prob", rollout_log_prob},
                                                    {"log_prob", log_prob},
                                                    {"advantages", advantages}}),
                              kContext));
  const at::Tensor current = log_prob.detach();
  RolloutPolicyGradient result;
  at::Tensor weights = at::ones_like(current);
  at::Tensor kept = response_mask.to(log_prob.scalar_type());
  if (options.importance) {
    ASSIGN_OR_RETURN(const RolloutIsWeights is,
                     WithContext(ComputeRolloutIsWeights(current, rollout_log_prob, response_mask, *options.importance),
                                 kContext));
    weights = is.weights.to(log_prob.scalar_type());
    result.metrics = NamedMetrics(is);
  }
  if (options.rejection) {
    ASSIGN_OR_RETURN(const RolloutRejection rejection,
                     WithContext(ComputeRolloutRejection(current, rollout_log_prob, response_mask, *options.rejection),
                                 kContext));
    kept = rejection.keep.to(log_prob.scalar_type());
    for (auto& metric : NamedMetrics(rejection)) result.metrics.push_back(std::move(metric));
  }
  ASSIGN_OR_RETURN(result.loss.loss,
                   WithContext(AggregateLoss(-advantages * weights * log_prob, kept, options.loss_agg_mode,
                                             options.loss_scale_factor),
                               kContext));
  c10::NoGradGuard no_grad;
  const at::Tensor zero = at::zeros({}, log_prob.options().dtype(at::kDouble));
  result.loss.pg_clipfrac = zero;
  result.loss.pg_clipfrac_lower = zero.clone();
  result.loss.ppo_kl = MaskedMean((rollout_log_prob - current).to(at::kDouble), kept.to(at::kDouble));
  return result;
}

}  // namespace rollout::algorithms
