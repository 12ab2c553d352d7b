#include "algorithms/variance_proxy.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

namespace rollout::algorithms {
namespace {

// Two rows of two tokens, p = 0.5 and s = 0.25 everywhere: w = 1 - 2p + s = 0.25 a token,
// W = 0.5 a row; mean advantages 1 and -1 (the second row's [-2, 0]).
VarianceProxyInputs TwoRows() {
  VarianceProxyInputs in;
  in.old_log_probs = at::full({2, 2}, std::log(0.5), at::kFloat);
  in.sum_pi_squared = at::full({2, 2}, 0.25, at::kFloat);
  in.advantages = at::tensor({1.0, 1.0, -2.0, 0.0}, at::kFloat).view({2, 2});
  in.response_mask = at::ones({2, 2}, at::kFloat);
  return in;
}

TEST(VarianceProxy, HandComputed) {
  const std::map<std::string, double> m = VarianceProxyMetrics(TwoRows(), /*grad_norm=*/1.0).value();
  EXPECT_NEAR(m.at("variance_proxy/expected_a_squared"), 1.0, 1e-6);
  EXPECT_NEAR(m.at("variance_proxy/expected_w"), 0.5, 1e-6);
  EXPECT_NEAR(m.at("variance_proxy/proxy2_total_power"), 0.5, 1e-6);  // mean of 1 * 0.5
  EXPECT_NEAR(m.at("variance_proxy/proxy1_signal_strength"), 1.0, 1e-12);
  EXPECT_NEAR(m.at("variance_proxy/proxy3_pure_noise"), 0.0, 1e-12);  // max(0, 0.5 - 1)
  const std::map<std::string, double> strong = VarianceProxyMetrics(TwoRows(), /*grad_norm=*/0.5).value();
  EXPECT_NEAR(strong.at("variance_proxy/proxy3_pure_noise"), 0.25, 1e-6);  // (0.5 - 0.25) / 1
}

// Weights of 2 scale W by 4 (expected_w 2) and the total power by the squared mean
// weight over the unweighted W: 4 * 1 * 0.5.
TEST(VarianceProxy, RolloutIsWeightsScaleTheEnergy) {
  VarianceProxyInputs in = TwoRows();
  in.rollout_is_weights = at::full({2, 2}, 2.0, at::kFloat);
  const std::map<std::string, double> m = VarianceProxyMetrics(in, std::nullopt).value();
  EXPECT_NEAR(m.at("variance_proxy/expected_w"), 2.0, 1e-6);
  EXPECT_NEAR(m.at("variance_proxy/proxy2_total_power"), 2.0, 1e-6);
  EXPECT_EQ(m.at("variance_proxy/proxy1_signal_strength"), 0.0);
  EXPECT_EQ(m.at("variance_proxy/proxy3_pure_noise"), 0.0);
}

// Masked tokens count in neither the energy nor the mean advantage.
TEST(VarianceProxy, MaskedTokensCountNowhere) {
  VarianceProxyInputs in = TwoRows();
  in.response_mask = at::tensor({1.0, 1.0, 1.0, 0.0}, at::kFloat).view({2, 2});
  in.advantages[1][1] = 100.0;
  in.sum_pi_squared[1][1] = 0.9;
  const std::map<std::string, double> m = VarianceProxyMetrics(in, std::nullopt).value();
  EXPECT_NEAR(m.at("variance_proxy/expected_w"), (0.5 + 0.25) / 2, 1e-6);
  EXPECT_NEAR(m.at("variance_proxy/expected_a_squared"), (1.0 + 4.0) / 2, 1e-6);
  EXPECT_NEAR(m.at("variance_proxy/proxy2_total_power"), (0.5 + 4.0 * 0.25) / 2, 1e-6);
}

TEST(VarianceProxy, BadInputsAreNamed) {
  VarianceProxyInputs in = TwoRows();
  in.sum_pi_squared = at::Tensor();
  EXPECT_EQ(VarianceProxyMetrics(in, 1.0).status().message(),
            "sum_pi_squared is missing; expected [2, 2] like old_log_probs");
  in = TwoRows();
  in.advantages = at::ones({2, 3});
  EXPECT_NE(VarianceProxyMetrics(in, 1.0).status().message().find("advantages must be [2, 2]"), std::string::npos);
}

}  // namespace
}  // namespace rollout::algorithms
