#include "algorithms/rollout_correction.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "algorithms/loss_aggregation.h"
#include "algorithms/masked_ops.h"
#include "common/status_macros.h"

namespace rollout::algorithms {
namespace {

// exp(20): verl's safety bound on a ratio before the threshold.
constexpr double kLogRatioBound = 20.0;

struct LogRatios {
  at::Tensor mask;       // [B, T] float64
  at::Tensor log_ratio;  // [B, T] float64: old - rollout, 0 where masked; no gradient
};

// The checked inputs as float64 log-ratios; `what` heads an input error.
absl::StatusOr<LogRatios> MaskedLogRatios(const at::Tensor& old_log_prob, const at::Tensor& rollout_log_prob,
                                          const at::Tensor& response_mask, const std::string& what) {
  RETURN_IF_ERROR(WithContext(CheckTokenLossInputs(response_mask, "response_mask",
                                                   {{"old_log_prob", old_log_prob},
                                                    {"rollout_log_prob", rollout_log_prob}}),
                              what));
  c10::NoGradGuard no_grad;
  LogRatios ratios;
  ratios.mask = response_mask.to(at::kDouble);
  ratios.log_ratio = (old_log_prob.detach().to(at::kDouble) - rollout_log_prob.to(at::kDouble)) * ratios.mask;
  return ratios;
}

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
  ASSIGN_OR_RETURN(const LogRatios in, MaskedLogRatios(old_log_prob, rollout_log_prob, response_mask,
                                                        "rollout importance sampling"));
  const at::Tensor& mask = in.mask;
  const at::Tensor& log_ratio = in.log_ratio;
  c10::NoGradGuard no_grad;
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
  if (options.batch_normalize) weights = weights / MaskedMean(weights, metric_mask);
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

absl::StatusOr<RolloutRejection> ComputeRolloutRejection(const at::Tensor& old_log_prob,
                                                         const at::Tensor& rollout_log_prob,
                                                         const at::Tensor& response_mask,
                                                         const RolloutRejectionOptions& options) {
  const std::string& level = options.level;
  if (!level.empty() && level != "token" && level != "sequence" && level != "geometric") {
    return absl::InvalidArgumentError(absl::StrCat(
        "rollout_rs: unknown level \"", level, "\"; valid levels are token, sequence, geometric"));
  }
  if (!level.empty() && !(options.lower > 0 && options.lower < options.upper)) {
    return absl::InvalidArgumentError(absl::StrCat("rollout_rs thresholds: need 0 < lower < upper; got lower ",
                                                   options.lower, " and upper ", options.upper));
  }
  if (!(options.veto_threshold >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("rollout_token_veto_threshold: must be >= 0; got ", options.veto_threshold));
  }
  ASSIGN_OR_RETURN(const LogRatios in, MaskedLogRatios(old_log_prob, rollout_log_prob, response_mask,
                                                        "rollout rejection sampling"));
  const at::Tensor& mask = in.mask;
  const at::Tensor& log_ratio = in.log_ratio;
  c10::NoGradGuard no_grad;
  const at::Tensor token_count = mask.sum(-1, /*keepdim=*/true);
  const at::Tensor has_tokens = (token_count > 0).to(at::kDouble);
  at::Tensor inside = at::ones_like(mask);  // 1: within the thresholds (per token, or per row)
  if (!level.empty()) {
    at::Tensor aggregated = log_ratio;
    if (level == "sequence") aggregated = log_ratio.sum(-1, /*keepdim=*/true);
    if (level == "geometric") aggregated = log_ratio.sum(-1, /*keepdim=*/true) / token_count.clamp_min(1);
    const at::Tensor ratio = aggregated.clamp(-kLogRatioBound, kLogRatioBound).exp();
    inside = ((ratio >= options.lower) & (ratio <= options.upper)).to(at::kDouble).expand_as(mask);
  }
  const at::Tensor rejected_tokens = (1 - inside) * mask;
  RolloutRejection result;
  result.masked_fraction = MaskedMean(1 - inside, mask);
  result.seq_masked_fraction = MaskedMean((rejected_tokens.sum(-1, /*keepdim=*/true) > 0).to(at::kDouble), has_tokens);
  at::Tensor vetoed = at::zeros_like(has_tokens);
  if (options.veto_threshold > 0) {
    const at::Tensor catastrophic = (log_ratio < std::log(options.veto_threshold)).to(at::kDouble) * mask;
    vetoed = (catastrophic.sum(-1, /*keepdim=*/true) > 0).to(at::kDouble);
    result.catastrophic_token_fraction = MaskedMean(catastrophic, mask);
  } else {
    result.catastrophic_token_fraction = at::zeros({}, mask.options());
  }
  result.veto_fraction = MaskedMean(vetoed, has_tokens);
  result.keep = (mask * inside * (1 - vetoed)).to(at::kFloat);
  return result;
}

std::vector<std::pair<std::string, at::Tensor>> NamedMetrics(const RolloutIsWeights& weights) {
  return {{"rollout_corr/rollout_is_mean", weights.mean},
          {"rollout_corr/rollout_is_max", weights.max},
          {"rollout_corr/rollout_is_min", weights.min},
          {"rollout_corr/rollout_is_ratio_fraction_high", weights.fraction_high},
          {"rollout_corr/kl", weights.kl},
          {"rollout_corr/k3_kl", weights.k3_kl}};
}

std::vector<std::pair<std::string, at::Tensor>> NamedMetrics(const RolloutRejection& rejection) {
  return {{"rollout_corr/rollout_rs_masked_fraction", rejection.masked_fraction},
          {"rollout_corr/rollout_rs_seq_masked_fraction", rejection.seq_masked_fraction},
          {"rollout_corr/rollout_is_veto_fraction", rejection.veto_fraction},
          {"rollout_corr/rollout_is_catastrophic_token_fraction", rejection.catastrophic_token_fraction}};
}

}  // namespace rollout::algorithms
