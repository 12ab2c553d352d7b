#include "algorithms/rollout_correction.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include "absl/strings/str_cat.h"
#include "algorithms/loss_aggregation.h"
#include "algorithms/masked_ops.h"
#include "common/status_macros.h"

namespace rollout::algorithms {
namespace {

// exp(20): verl's safety bound on a ratio before the threshold.
constexpr double kLogRatioBound = 20.0;

}  // namespace

absl::StatusOr<RolloutIsWeights> ComputeRolloutIsWeights(const at::Tensor& old_log_prob,
                                                         const at::Tensor& rollout_log_prob,
                                                         const at::Tensor& response_mask,
                                                         const RolloutIsOptions& options) {
  if (options.level != "token" && options.level != "sequence") {
    return absl::InvalidArgumentError(absl::StrCat(
        "rollout_is: unknown level \"", options.level, "\"; valid levels are token, sequence"));
  }
  if (!(options.threshold > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("rollout_is_threshold: must be > 0; got ", options.threshold));
  }
  RETURN_IF_ERROR(WithContext(CheckTokenLossInputs(response_mask, "response_mask",
                                                   {{"old_log_prob", old_log_prob},
                                                    {"rollout_log_prob", rollout_log_prob}}),
                              "rollout importance sampling"));
  c10::NoGradGuard no_grad;
  const at::Tensor mask = response_mask.to(at::kDouble);
  const at::Tensor log_ratio = (old_log_prob.detach().to(at::kDouble) - rollout_log_prob.to(at::kDouble)) * mask;
  RolloutIsWeights result;
  at::Tensor ratios, weights, metric_mask;  // ratios and weights per token, or per row
  if (options.level == "token") {
    ratios = log_ratio.clamp(-kLogRatioBound, kLogRatioBound).exp();
    metric_mask = mask;
  } else {
    ratios = log_ratio.sum(-1, /*keepdim=*/true).clamp(-kLogRatioBound, kLogRatioBound).exp();
    metric_mask = (mask.sum(-1, /*keepdim=*/true) > 0).to(at::kDouble);
  }
  weights = ratios.clamp_max(options.threshold);
  result.weights = (weights.expand_as(mask) * mask).to(at::kFloat);
  result.mean = MaskedMean(weights, metric_mask);
  const at::Tensor counted = metric_mask > 0;
  result.max = at::where(counted, ratios, at::full({}, -INFINITY, ratios.options())).max();
  result.min = at::where(counted, ratios, at::full({}, INFINITY, ratios.options())).min();
  result.fraction_high = MaskedMean((ratios > options.threshold).to(at::kDouble), metric_mask);
  result.kl = MaskedMean(-log_ratio, mask);
  result.k3_kl = MaskedMean(log_ratio.exp() - log_ratio - 1, mask);
  return result;
}

}  // namespace rollout::algorithms
