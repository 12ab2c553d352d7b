// Hand-computed cases of verl's policy-loss variants (loss_mode sapo, dppo_tv, dppo_kl,
// kl_cov, clip_cov, cispo, geo_mean, gpg): values, metrics and gradients.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/policy_loss.h"
#include "tests/algorithms/policy_loss_cases.h"

namespace rollout::algorithms {
namespace {

using policy_loss_testing::Doubles;
using policy_loss_testing::Options;

TEST(PolicyLossKlCov, PenalisesTheTokensOfLargestCovarianceOnly) {
  // old_log_prob 0, so r = exp(log_prob); five response tokens (the last of row 1 masked):
  //   log_prob  ln 2, ln 0.5, 0 | ln 1.25, ln 0.8;   A  1, 1, 1 | -1, -1
  //   A - mean A = 0.8, 0.8, 0.8, -1.2, -1.2; log_prob - its mean (0) as is;
  //   covariance 0.8 ln 2, -0.8 ln 2, 0, -1.2 ln 1.25, 1.2 ln 1.25.
  // kl_cov_ratio 0.5: k = floor(2.5) = 2 tokens, (0, 0) and (1, 1), get 0.1 |log_prob|:
  //   losses -2 + 0.1 ln 2, -0.5, -1, 1.25, 0.8 - 0.1 ln 0.8; token-mean
  //   (-1.45 + 0.1 ln 2.5) / 5. ppo_kl = mean |log_prob| = (2 ln 2 + ln 1.5625) / 5.
  //   Gradient (-A r + 0.1 sign(log_prob) where penalised) / 5:
  //   -0.38, -0.1, -0.2 | 0.25, 0.14, 0. (Within 1e-8: token-mean's denominator has 1e-8 added.)
  at::Tensor log_prob =
      Doubles({std::log(2.0), std::log(0.5), 0, std::log(1.25), std::log(0.8), 7}, {2, 3})
          .requires_grad_(true);
  const at::Tensor advantages = Doubles({1, 1, 1, -1, -1, -1}, {2, 3});
  const at::Tensor mask = Doubles({1, 1, 1, 1, 1, 0}, {2, 3});
  PolicyLossOptions options = Options("kl_cov");
  options.kl_cov_ratio = 0.5;
  PolicyLossResult result =
      ComputePolicyLoss(at::zeros({2, 3}, at::kDouble), log_prob, advantages, mask, options).value();
  EXPECT_NEAR(result.loss.item<double>(), (-1.45 + 0.1 * std::log(2.5)) / 5, 1e-8);
  EXPECT_NEAR(result.ppo_kl.item<double>(), (2 * std::log(2.0) + std::log(1.5625)) / 5, 1e-8);
  EXPECT_EQ(result.pg_clipfrac.item<double>(), 0.0);
  EXPECT_EQ(result.pg_clipfrac_lower.item<double>(), 0.0);
  result.loss.backward();
  const at::Tensor expected = Doubles({-0.38, -0.1, -0.2, 0.25, 0.14, 0}, {2, 3});
  EXPECT_TRUE(at::allclose(log_prob.grad(), expected, 1e-8, 1e-9)) << log_prob.grad();
  // The default ratio (0.0002) still penalises one token, the largest covariance's (0, 0).
  options.kl_cov_ratio = 0.0002;
  EXPECT_NEAR(ComputePolicyLoss(at::zeros({2, 3}, at::kDouble), log_prob.detach(), advantages, mask, options)
                  .value()
                  .loss.item<double>(),
              (-1.45 + 0.1 * std::log(2.0)) / 5, 1e-8);
}

TEST(PolicyLossSapo, ASoftGateAggregatedPerSequence) {
  // old_log_prob 0, so r = exp(log_prob). Per token l = -A (4 / tau) sigmoid(tau (r - 1)),
  // tau 1 for A > 0 and 1.05 otherwise; gradient -A 4 s (1 - s) r with s the sigmoid.
  //   row 0: (r 1, A 1) -> -2; (r 2, A -1) -> (4 / 1.05) sigmoid(1.05);
  //   row 1: (r 0.5, A 2) -> -8 sigmoid(-0.5); a masked token.
  // seq-mean-token-mean: (row 0's mean + row 1's) / 2, whatever loss_agg_mode says.
  const auto sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
  at::Tensor log_prob = Doubles({0, std::log(2.0), std::log(0.5), 5}, {2, 2}).requires_grad_(true);
  const at::Tensor advantages = Doubles({1, -1, 2, 1}, {2, 2});
  const at::Tensor mask = Doubles({1, 1, 1, 0}, {2, 2});
  PolicyLossOptions options = Options("sapo");
  options.loss_agg_mode = "token-mean";
  PolicyLossResult result = ComputePolicyLoss(at::zeros({2, 2}, at::kDouble), log_prob, advantages, mask, options).value();
  const double row0 = (-2 + 4 / 1.05 * sigmoid(1.05)) / 2, row1 = -8 * sigmoid(-0.5);
  EXPECT_NEAR(result.loss.item<double>(), (row0 + row1) / 2, 1e-8);
  EXPECT_EQ(result.pg_clipfrac.item<double>(), 0.0);
  EXPECT_NEAR(result.ppo_kl.item<double>(), 0.0, 1e-8);  // log-ratios 0, ln 2, ln 0.5
  result.loss.backward();
  const auto slope = [&](double tau, double r) { return 4 * sigmoid(tau * (r - 1)) * (1 - sigmoid(tau * (r - 1))) * r; };
  const at::Tensor expected = Doubles({-slope(1, 1) / 4, slope(1.05, 2) / 4, -2 * slope(1, 0.5) / 2, 0}, {2, 2});
  EXPECT_TRUE(at::allclose(log_prob.grad(), expected, 1e-7, 1e-9)) << log_prob.grad();
}

// DPPO on six tokens (old probability p0, probability p, advantage), clip 0.2:
//   (0.5, 0.6, 1) both trusted | (0.5, 0.8, 1) a rise of 0.3, binary KL 0.223: neither |
//   (0.5, 0.2, -1) a fall of 0.3, binary KL 0.223: neither | (0.5, 0.4, -1) both |
//   (0.05, 0.2, 1) both, ratio 4 truncated to clip_ratio_c 3 | (0.97, 1 - 1e-6, 1) a rise of
//   0.03 (trusted by dppo_tv) but binary KL 0.279 (not by dppo_kl). l = -A min(r, 3) log p
//   where trusted; token-mean over six; gradient -A min(r, 3) / 6 where trusted.
struct DppoCase {
  std::vector<double> old_prob = {0.5, 0.5, 0.5, 0.5, 0.05, 0.97};
  std::vector<double> prob = {0.6, 0.8, 0.2, 0.4, 0.2, 1 - 1e-6};
  std::vector<double> advantage = {1, 1, -1, -1, 1, 1};

  void Check(const std::string& loss_mode, const std::vector<bool>& trusted) const {
    std::vector<double> old_log_prob, log_prob, gradient;
    double loss = 0, log_ratios = 0;
    for (size_t i = 0; i < prob.size(); ++i) {
      old_log_prob.push_back(std::log(old_prob[i]));
      log_prob.push_back(std::log(prob[i]));
      const double weight = std::min(prob[i] / old_prob[i], 3.0);
      loss += trusted[i] ? -advantage[i] * weight * std::log(prob[i]) / 6 : 0;
      gradient.push_back(trusted[i] ? -advantage[i] * weight / 6 : 0);
      log_ratios += std::log(prob[i] / old_prob[i]);
    }
    at::Tensor lp = Doubles(log_prob, {1, 6}).requires_grad_(true);
    PolicyLossResult result = ComputePolicyLoss(Doubles(old_log_prob, {1, 6}), lp, Doubles(advantage, {1, 6}),
                                                at::ones({1, 6}), Options(loss_mode))
                                  .value();
    const double untrusted = static_cast<double>(std::count(trusted.begin(), trusted.end(), false));
    EXPECT_NEAR(result.loss.item<double>(), loss, 1e-8) << loss_mode;
    EXPECT_NEAR(result.pg_clipfrac.item<double>(), untrusted / 6, 1e-8) << loss_mode;
    EXPECT_NEAR(result.pg_clipfrac_lower.item<double>(), 1.0 / 6, 1e-8) << loss_mode;  // the ratio of 4
    EXPECT_NEAR(result.ppo_kl.item<double>(), -log_ratios / 6, 1e-8) << loss_mode;
    result.loss.backward();
    EXPECT_TRUE(at::allclose(lp.grad(), Doubles(gradient, {1, 6}), 1e-7, 1e-9)) << loss_mode << lp.grad();
  }
};

TEST(PolicyLossDppo, TotalVariationTrustRegion) {
  DppoCase().Check("dppo_tv", {true, false, false, true, true, true});
}

TEST(PolicyLossDppo, BinaryKlTrustRegion) {
  DppoCase().Check("dppo_kl", {true, false, false, true, true, false});
}

// old_log_prob 0, clip 0.2; five response tokens and a masked one:
//   (r, A): (1.5, 2) clipped term larger, loss -2.4 | (0.9, 2) -1.8 | (1.1, -1) 1.1 |
//           (0.5, -1) clipped term larger, 0.8 | (1, 1) -1.
//   mean A 0.6, mean log_prob ln(0.7425) / 5; the covariance terms of the tokens the clip
//   left alone: (0.9, 2) -0.0641, (1.1, -1) -0.2478, (1, 1) 0.0238.
struct ClipCovCase {
  at::Tensor log_prob = Doubles({std::log(1.5), std::log(0.9), std::log(1.1), std::log(0.5), 0, 3}, {1, 6});
  at::Tensor advantages = Doubles({2, 2, -1, -1, 1, 5}, {1, 6});
  at::Tensor mask = Doubles({1, 1, 1, 1, 1, 0}, {1, 6});

  PolicyLossResult Run(const PolicyLossOptions& options, const at::Tensor& lp) const {
    return ComputePolicyLoss(at::zeros({1, 6}, at::kDouble), lp, advantages, mask, options).value();
  }
};

// clip_cov with the window (-0.1, 0.1), which holds (0.9, 2) and (1, 1).
PolicyLossOptions ClipCovInWindow(double clip_cov_ratio) {
  PolicyLossOptions options = Options("clip_cov");
  options.clip_cov_lb = -0.1;
  options.clip_cov_ub = 0.1;
  options.clip_cov_ratio = clip_cov_ratio;
  return options;
}

TEST(PolicyLossClipCov, DetachesTheChosenTokensInTheCovarianceWindow) {
  // The window holds (0.9, 2) and (1, 1); clip_cov_ratio 0.4 allows floor(2) = 2
  // tokens, so both are detached: loss (-2.4 + 1.1 + 0.8) / 5 = -0.1; the gradient only
  // through (1.1, -1), whose loss -A r has derivative r / 5 = 0.22.
  ClipCovCase c;
  at::Tensor log_prob = c.log_prob.clone().requires_grad_(true);
  PolicyLossResult result = c.Run(ClipCovInWindow(0.4), log_prob);
  EXPECT_NEAR(result.loss.item<double>(), -0.1, 1e-8);
  EXPECT_NEAR(result.pg_clipfrac.item<double>(), 0.4, 1e-8);
  EXPECT_EQ(result.pg_clipfrac_lower.item<double>(), 0.0);
  EXPECT_NEAR(result.ppo_kl.item<double>(), -std::log(0.7425) / 5, 1e-8);
  result.loss.backward();
  EXPECT_TRUE(at::allclose(log_prob.grad(), Doubles({0, 0, 0.22, 0, 0, 0}, {1, 6}), 1e-8, 1e-9))
      << log_prob.grad();
  // verl's default window (1, 5) holds none of them: the clipped PPO loss, no dual clip.
  PolicyLossResult defaults = c.Run(Options("clip_cov"), c.log_prob);
  EXPECT_NEAR(defaults.loss.item<double>(), (-2.4 - 1.8 + 1.1 + 0.8 - 1) / 5, 1e-8);
  EXPECT_EQ(defaults.pg_clipfrac.item<double>(), 0.0);
}

TEST(PolicyLossClipCov, TheSeedChoosesAmongTheCandidates) {
  // One token of the two in the window (ratio 0.2: floor(1)): (0.9, 2) detached gives
  // (-2.4 + 1.1 + 0.8 - 1) / 5 = -0.3, (1, 1) detached (-2.4 - 1.8 + 1.1 + 0.8) / 5 = -0.46.
  ClipCovCase c;
  PolicyLossOptions options = ClipCovInWindow(0.2);
  int first = 0, second = 0;
  for (uint64_t seed = 0; seed < 32; ++seed) {
    options.selection_seed = seed;
    const double loss = c.Run(options, c.log_prob).loss.item<double>();
    EXPECT_EQ(loss, c.Run(options, c.log_prob).loss.item<double>()) << seed;
    first += std::abs(loss + 0.3) < 1e-8 ? 1 : 0;
    second += std::abs(loss + 0.46) < 1e-8 ? 1 : 0;
  }
  EXPECT_EQ(first + second, 32);
  EXPECT_GT(first, 4);
  EXPECT_GT(second, 4);
}

TEST(PolicyLossCispo, TheClippedRatioWeighsEachTokensLogProb) {
  // old_log_prob 0, clip 0.2: (r, A) (1.5, 1) weight 1.2 | (0.5, -1) 0.8 | (1.1, 2) 1.1 |
  // masked. l = -w A log_prob; token-mean over 3, gradient -w A / 3 on every token (none
  // loses it to the clip). Two ratios clipped: pg_clipfrac 2 / 3.
  at::Tensor log_prob =
      Doubles({std::log(1.5), std::log(0.5), std::log(1.1), 4}, {1, 4}).requires_grad_(true);
  const at::Tensor advantages = Doubles({1, -1, 2, 3}, {1, 4});
  const at::Tensor mask = Doubles({1, 1, 1, 0}, {1, 4});
  PolicyLossResult result =
      ComputePolicyLoss(at::zeros({1, 4}, at::kDouble), log_prob, advantages, mask, Options("cispo")).value();
  const double expected = (-1.2 * std::log(1.5) + 0.8 * std::log(0.5) - 2.2 * std::log(1.1)) / 3;
  EXPECT_NEAR(result.loss.item<double>(), expected, 1e-8);
  EXPECT_NEAR(result.pg_clipfrac.item<double>(), 2.0 / 3, 1e-8);
  EXPECT_EQ(result.pg_clipfrac_lower.item<double>(), 0.0);
  EXPECT_NEAR(result.ppo_kl.item<double>(), -std::log(0.825) / 3, 1e-8);
  result.loss.backward();
  EXPECT_TRUE(at::allclose(log_prob.grad(), Doubles({-0.4, 0.8 / 3, -2.2 / 3, 0}, {1, 4}), 1e-8, 1e-9))
      << log_prob.grad();
}

TEST(PolicyLossGeoMean, HandComputedCase) {
  // old_log_prob 0, so x = log_prob; clip 0.2: x clamped to [-0.2, 0.2].
  //   row 0: x 0.1, 0.5 (masked third), A 1:  x' = 0.1, 0.2 (min for A > 0);
  //          r = exp(0.3 / 2), A_b = 1: loss -e^0.15
  //   row 1: x -0.5, 0.1 (masked third), A -1: x' = -0.2, 0.1 (max for A < 0);
  //          r = exp(-0.1 / 2), A_b = -1: loss e^-0.05
  // Batch mean (e^-0.05 - e^0.15) / 2. Clamped: (0, 1) with A > 0, (1, 0) with A < 0:
  // pg_clipfrac = pg_clipfrac_lower = 1 / 4; ppo_kl = -(0.1 + 0.5 - 0.5 + 0.1) / 4.
  // Gradient: clamped tokens 0; else -A_b r_b / (2 rows x n_b): -e^0.15 / 4, e^-0.05 / 4.
  at::Tensor log_prob = Doubles({0.1, 0.5, 0, -0.5, 0.1, 9}, {2, 3}).requires_grad_(true);
  const at::Tensor advantages = Doubles({1, 1, 1, -1, -1, -1}, {2, 3});
  const at::Tensor mask = Doubles({1, 1, 0, 1, 1, 0}, {2, 3});
  const at::Tensor old_log_prob = at::zeros({2, 3}, at::kDouble);
  PolicyLossResult result =
      ComputePolicyLoss(old_log_prob, log_prob, advantages, mask, Options("geo_mean")).value();
  EXPECT_NEAR(result.loss.item<double>(), (std::exp(-0.05) - std::exp(0.15)) / 2, 1e-8);
  EXPECT_NEAR(result.pg_clipfrac.item<double>(), 0.25, 1e-8);
  EXPECT_NEAR(result.pg_clipfrac_lower.item<double>(), 0.25, 1e-8);
  EXPECT_NEAR(result.ppo_kl.item<double>(), -0.05, 1e-8);
  result.loss.backward();
  const at::Tensor expected = Doubles({-std::exp(0.15) / 4, 0, 0, 0, std::exp(-0.05) / 4, 0}, {2, 3});
  EXPECT_TRUE(at::allclose(log_prob.grad(), expected, 1e-7, 1e-9)) << log_prob.grad();
  // Token weights enter as their geometric mean over the sequence: 2 and 0.5 here (within
  // verl's 1e-10 inside the log and 1e-8 in the count).
  const at::Tensor weights = Doubles({4, 1, 7, 1, 0.25, 9}, {2, 3});
  EXPECT_NEAR(ComputePolicyLoss(old_log_prob, log_prob.detach(), advantages, mask, Options("geo_mean"), weights)
                  .value()
                  .loss.item<double>(),
              (0.5 * std::exp(-0.05) - 2 * std::exp(0.15)) / 2, 1e-7);
}

TEST(PolicyLossGpg, IsMinusAdvantageTimesLogProbAggregated) {
  // Tokens (log_prob, A): (-1, 2), (-0.5, -1), (-2, 1) | (-3, 4) masked. token-mean:
  // (2 - 0.5 + 2) / 3 = 7 / 6; gradient -A / 3; old_log_prob plays no part.
  at::Tensor log_prob = Doubles({-1, -0.5, -2, -3}, {2, 2}).requires_grad_(true);
  const at::Tensor advantages = Doubles({2, -1, 1, 4}, {2, 2});
  const at::Tensor mask = Doubles({1, 1, 1, 0}, {2, 2});
  PolicyLossResult result =
      ComputePolicyLoss(at::randn({2, 2}, at::kDouble), log_prob, advantages, mask, Options("gpg")).value();
  EXPECT_NEAR(result.loss.item<double>(), 7.0 / 6, 1e-8);
  EXPECT_EQ(result.pg_clipfrac.item<double>(), 0.0);
  EXPECT_EQ(result.ppo_kl.item<double>(), 0.0);
  result.loss.backward();
  EXPECT_TRUE(at::allclose(log_prob.grad(), Doubles({-2.0 / 3, 1.0 / 3, -1.0 / 3, 0}, {2, 2}), 1e-7, 1e-9))
      << log_prob.grad();
}

}  // namespace
}  // namespace rollout::algorithms
