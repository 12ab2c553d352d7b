#include "algorithms/rollout_policy_gradient.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace rollout::algorithms {
namespace {

using ::testing::HasSubstr;

at::Tensor Doubles(std::vector<double> values, std::vector<int64_t> shape) {
  return at::tensor(values, at::kDouble).reshape(shape);
}

// Three response tokens and a masked one: the rollout's probabilities 0.5, 0.5, 0.4, the
// current policy's 0.6, 0.3, 0.4 (ratios 1.2, 0.6, 1), advantages 1, -1, 2.
struct Case {
  at::Tensor rollout_log_prob = Doubles({std::log(0.5), std::log(0.5), std::log(0.4), -3}, {1, 4});
  at::Tensor log_prob = Doubles({std::log(0.6), std::log(0.3), std::log(0.4), 0}, {1, 4}).requires_grad_(true);
  at::Tensor advantages = Doubles({1, -1, 2, 5}, {1, 4});
  at::Tensor mask = Doubles({1, 1, 1, 0}, {1, 4});

  RolloutPolicyGradient Run(const RolloutPolicyGradientOptions& options) const {
    return ComputeRolloutPolicyGradient(rollout_log_prob, log_prob, advantages, mask, options).value();
  }
};

std::map<std::string, double> MetricValues(const RolloutPolicyGradient& pg) {
  std::map<std::string, double> values;
  for (const auto& [name, value] : pg.metrics) values[name] = value.item<double>();
  return values;
}

TEST(RolloutPolicyGradient, WithoutCorrectionIsReinforce) {
  // -A log_prob, token-mean over 3: (-ln 0.6 + ln 0.3 - 2 ln 0.4) / 3; gradient -A / 3.
  Case c;
  RolloutPolicyGradient pg = c.Run(RolloutPolicyGradientOptions());
  EXPECT_NEAR(pg.loss.loss.item<double>(), (-std::log(0.6) + std::log(0.3) - 2 * std::log(0.4)) / 3, 1e-8);
  EXPECT_EQ(pg.loss.pg_clipfrac.item<double>(), 0.0);
  EXPECT_NEAR(pg.loss.ppo_kl.item<double>(), (std::log(0.5 / 0.6) + std::log(0.5 / 0.3)) / 3, 1e-8);
  EXPECT_TRUE(pg.metrics.empty());
  pg.loss.loss.backward();
  EXPECT_TRUE(at::allclose(c.log_prob.grad(), Doubles({-1.0 / 3, 1.0 / 3, -2.0 / 3, 0}, {1, 4}), 1e-8, 1e-9))
      << c.log_prob.grad();
}

TEST(RolloutPolicyGradient, ImportanceWeightsFromTheCurrentPolicyScaleEachToken) {
  // Token weights min(ratio, 1.1): 1.1, 0.6, 1 — detached, so the gradient is -A w / 3.
  Case c;
  RolloutPolicyGradientOptions options;
  options.importance = RolloutIsOptions{"token", 1.1, false};
  RolloutPolicyGradient pg = c.Run(options);
  const double expected = (-1.1 * std::log(0.6) + 0.6 * std::log(0.3) - 2 * std::log(0.4)) / 3;
  EXPECT_NEAR(pg.loss.loss.item<double>(), expected, 1e-7);
  const std::map<std::string, double> metrics = MetricValues(pg);
  EXPECT_NEAR(metrics.at("rollout_corr/rollout_is_mean"), (1.1 + 0.6 + 1) / 3, 1e-7);
  EXPECT_NEAR(metrics.at("rollout_corr/rollout_is_max"), 1.2, 1e-7);
  EXPECT_NEAR(metrics.at("rollout_corr/rollout_is_ratio_fraction_high"), 1.0 / 3, 1e-7);
  pg.loss.loss.backward();
  EXPECT_TRUE(at::allclose(c.log_prob.grad(), Doubles({-1.1 / 3, 0.6 / 3, -2.0 / 3, 0}, {1, 4}), 1e-7, 1e-9))
      << c.log_prob.grad();
}

TEST(RolloutPolicyGradient, RejectedTokensLeaveTheLoss) {
  // Token rejection outside [0.7, 1.1] drops the ratios 1.2 and 0.6: only the third token
  // counts, -2 ln 0.4 over one token.
  Case c;
  RolloutPolicyGradientOptions options;
  options.rejection = RolloutRejectionOptions{"token", 1.1, 0.7, 0};
  RolloutPolicyGradient pg = c.Run(options);
  EXPECT_NEAR(pg.loss.loss.item<double>(), -2 * std::log(0.4), 1e-6);
  EXPECT_NEAR(pg.loss.ppo_kl.item<double>(), 0.0, 1e-6);
  EXPECT_NEAR(MetricValues(pg).at("rollout_corr/rollout_rs_masked_fraction"), 2.0 / 3, 1e-7);
}

TEST(RolloutPolicyGradient, BadInputsAndOptionsAreNamed) {
  Case c;
  RolloutPolicyGradientOptions options;
  options.importance = RolloutIsOptions{"tokens", 2, false};
  const absl::Status level = ComputeRolloutPolicyGradient(c.rollout_log_prob, c.log_prob, c.advantages, c.mask, options).status();
  EXPECT_EQ(level.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(level.message(), HasSubstr("rollout-correction policy gradient: rollout_is: unknown level \"tokens\""));
  const absl::Status shape =
      ComputeRolloutPolicyGradient(c.rollout_log_prob, c.log_prob, at::zeros({1, 3}, at::kDouble), c.mask,
                                   RolloutPolicyGradientOptions())
          .status();
  EXPECT_THAT(shape.message(), HasSubstr("advantages: shape [1, 3] does not match response_mask [1, 4]"));
}

}  // namespace
}  // namespace rollout::algorithms
