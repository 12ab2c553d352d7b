// verl's gradient-variance proxy metrics (compute_variance_proxy_metrics, from the
// optimal token baseline work): a forward-only estimate of how noisy the policy
// gradient is, from each response's "realized energy" W = sum_t (1 - 2 p_t + s_t) over its
// tokens (p_t = exp(old_log_probs_t), s_t = sum_pi_squared_t) and its mean advantage A:
//   variance_proxy/proxy2_total_power   mean over rows of A^2 max(W, 0)
//   variance_proxy/proxy1_signal_strength  grad_norm^2 (0 without a gradient norm)
//   variance_proxy/proxy3_pure_noise    max(0, (proxy2 - proxy1) / (B - 1)) (0 without a
//                                       gradient norm or with one row)
//   variance_proxy/expected_a_squared   mean of A^2
//   variance_proxy/expected_w           mean of W
// With rollout_is_weights each token's term is weighted by the weight's square in W,
// and proxy2 is the mean of rho^2 A^2 max(W / rho^2 summed, 0), rho the row's mean
// weight, as verl computes it.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace rollout::algorithms {

struct VarianceProxyInputs {
  at::Tensor old_log_probs;       // [B, T] floating
  at::Tensor sum_pi_squared;      // [B, T] floating
  at::Tensor advantages;          // [B, T] floating
  at::Tensor response_mask;       // [B, T]
  at::Tensor rollout_is_weights;  // [B, T] floating, or undefined
};

// The metrics above, by verl's names. InvalidArgument naming an input that is missing,
// of another shape than old_log_probs, or not finite.
absl::StatusOr<std::map<std::string, double>> VarianceProxyMetrics(const VarianceProxyInputs& inputs,
                                                                    std::optional<double> grad_norm);

}  // namespace rollout::algorithms
