// Shared inputs of the policy-loss tests (policy_loss_test.cc, policy_loss_modes_test.cc).
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <utility>
#include <vector>

#include "algorithms/policy_loss.h"

namespace rollout::algorithms::policy_loss_testing {

// Every loss mode, and every aggregation mode, ComputePolicyLoss accepts.
inline const std::vector<std::string> kLossModes = {"vanilla", "gspo",     "sapo",     "dppo_tv", "dppo_kl",
                                                    "kl_cov",  "clip_cov", "geo_mean", "cispo",   "gpg"};
inline const std::vector<std::string> kAggModes = {"token-mean", "seq-mean-token-sum", "seq-mean-token-mean",
                                                   "seq-mean-token-sum-norm"};

inline at::Tensor Doubles(std::vector<double> values, std::vector<int64_t> shape) {
  return at::tensor(values, at::kDouble).reshape(shape);
}

inline PolicyLossOptions Options(std::string loss_mode = "vanilla") {
  PolicyLossOptions options;
  options.loss_mode = std::move(loss_mode);
  return options;
}

}  // namespace rollout::algorithms::policy_loss_testing
