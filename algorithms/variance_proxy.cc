#include "algorithms/variance_proxy.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "algorithms/advantage_inputs.h"
#include "algorithms/masked_ops.h"
#include "common/status_macros.h"

namespace rollout::algorithms {
absl::StatusOr<std::map<std::string, double>> VarianceProxyMetrics(const VarianceProxyInputs& inputs,
                                                                    std::optional<double> grad_norm) {
  const at::Tensor& log_probs = inputs.old_log_probs;
  if (!log_probs.defined() || log_probs.dim() != 2 || !at::isFloatingType(log_probs.scalar_type())) {
    return absl::InvalidArgumentError("variance proxy: old_log_probs must be [B, T] floating");
  }
  RETURN_IF_ERROR(CheckFinite(log_probs, "old_log_probs"));
  const at::Tensor reference = log_probs.to(at::kDouble);
  auto like_log_probs = [&](const at::Tensor& tensor, const std::string& name, bool floating) {
    return TokenTensorLike(tensor, name, reference, floating, "old_log_probs");
  };
  ASSIGN_OR_RETURN(const at::Tensor squares, like_log_probs(inputs.sum_pi_squared, "sum_pi_squared", true));
  ASSIGN_OR_RETURN(const at::Tensor advantages, like_log_probs(inputs.advantages, "advantages", true));
  ASSIGN_OR_RETURN(const at::Tensor mask, like_log_probs(inputs.response_mask, "response_mask", false));
  const at::Tensor weights = (1 - 2 * reference.exp() + squares) * mask;
  const int64_t rows = reference.size(0);
  const at::Tensor row_advantages = MaskedMean(advantages, mask, -1);
  at::Tensor power;
  at::Tensor energy;
  if (inputs.rollout_is_weights.defined()) {
    ASSIGN_OR_RETURN(const at::Tensor is_weights,
                     like_log_probs(inputs.rollout_is_weights, "rollout_is_weights", true));
    const at::Tensor squared = is_weights.square();
    energy = (weights * squared).sum(-1);
    // verl divides the weighted terms by the clamped squares again: the plain energy
    // but where a weight is below 1e-5.
    const at::Tensor unweighted = (weights * squared / squared.clamp_min(1e-10)).sum(-1).clamp_min(0);
    power = (MaskedMean(is_weights, mask, -1).square() * row_advantages.square() * unweighted).mean();
  } else {
    energy = weights.sum(-1);
    power = (row_advantages.square() * energy.clamp_min(0)).mean();
  }
  std::map<std::string, double> metrics;
  const double total_power = rows == 0 ? 0 : power.item<double>();
  const double signal = grad_norm.has_value() ? *grad_norm * *grad_norm : 0;
  metrics["variance_proxy/proxy1_signal_strength"] = signal;
  metrics["variance_proxy/proxy2_total_power"] = total_power;
  metrics["variance_proxy/proxy3_pure_noise"] =
      grad_norm.has_value() && rows > 1 ? std::max(0.0, (total_power - signal) / static_cast<double>(rows - 1)) : 0;
  metrics["variance_proxy/expected_a_squared"] = rows == 0 ? 0 : row_advantages.square().mean().item<double>();
  metrics["variance_proxy/expected_w"] = rows == 0 ? 0 : energy.mean().item<double>();
  return metrics;
}

}  // namespace rollout::algorithms
