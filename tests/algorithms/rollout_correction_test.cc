#include "algorithms/rollout_correction.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace rollout::algorithms {
namespace {

at::Tensor Doubles(std::vector<double> values, std::vector<int64_t> shape) {
  return at::tensor(values, at::kDouble).reshape(shape);
}

// old - rollout: row 0 [0.5, -1, 0], row 1 [0, 1, masked].
struct Case {
  at::Tensor old_log_prob = Doubles({-1.0, -2.0, -0.5, -0.3, -0.2, -7.0}, {2, 3});
  at::Tensor rollout_log_prob = Doubles({-1.5, -1.0, -0.5, -0.3, -1.2, 0.0}, {2, 3});
  at::Tensor mask = Doubles({1, 1, 1, 1, 1, 0}, {2, 3});
};

RolloutIsOptions Options(const char* level, double threshold) {
  RolloutIsOptions options;
  options.level = level;
  options.threshold = threshold;
  return options;
}

std::vector<float> Values(const at::Tensor& tensor) {
  const at::Tensor flat = tensor.contiguous().to(at::kFloat).flatten();
  return std::vector<float>(flat.data_ptr<float>(), flat.data_ptr<float>() + flat.numel());
}

TEST(RolloutIsWeights, TokenLevelRatiosTruncatedAtTheThreshold) {
  const Case c;
  const RolloutIsWeights is =
      ComputeRolloutIsWeights(c.old_log_prob, c.rollout_log_prob, c.mask, Options("token", 1.5)).value();
  // e^0.5 = 1.6487 and e^1 = 2.7183 truncated to 1.5; e^-1 = 0.3679; masked 0.
  EXPECT_THAT(Values(is.weights), ::testing::Pointwise(::testing::FloatNear(1e-5),
                                                        std::vector<float>{1.5, 0.367879, 1, 1, 1.5, 0}));
  EXPECT_EQ(is.weights.scalar_type(), at::kFloat);
  EXPECT_NEAR(is.mean.item<double>(), (1.5 + std::exp(-1.0) + 1 + 1 + 1.5) / 5, 1e-7);
  EXPECT_NEAR(is.max.item<double>(), std::exp(1.0), 1e-7);
  EXPECT_NEAR(is.min.item<double>(), std::exp(-1.0), 1e-7);
  EXPECT_NEAR(is.fraction_high.item<double>(), 0.4, 1e-7);
  EXPECT_NEAR(is.kl.item<double>(), -(0.5 - 1 + 1) / 5, 1e-7);
  // exp(d) - d - 1 over d = 0.5, -1, 0, 0, 1.
  EXPECT_NEAR(is.k3_kl.item<double>(), (std::exp(0.5) - 1.5 + std::exp(-1.0) + std::exp(1.0) - 2) / 5, 1e-7);
}

TEST(RolloutIsWeights, SequenceLevelIsTheProductOverTheResponseForEveryToken) {
  const Case c;
  const RolloutIsWeights is =
      ComputeRolloutIsWeights(c.old_log_prob, c.rollout_log_prob, c.mask, Options("sequence", 2.0)).value();
  // Row 0: e^(0.5 - 1 + 0) = 0.6065; row 1: e^(0 + 1) = 2.718 truncated to 2.
  const float row0 = static_cast<float>(std::exp(-0.5));
  EXPECT_THAT(Values(is.weights), ::testing::Pointwise(::testing::FloatNear(1e-5),
                                                        std::vector<float>{row0, row0, row0, 2, 2, 0}));
  EXPECT_NEAR(is.mean.item<double>(), (std::exp(-0.5) + 2) / 2, 1e-7);  // over responses
  EXPECT_NEAR(is.max.item<double>(), std::exp(1.0), 1e-7);
  EXPECT_NEAR(is.min.item<double>(), std::exp(-0.5), 1e-7);
  EXPECT_NEAR(is.fraction_high.item<double>(), 0.5, 1e-7);
}

TEST(RolloutIsWeights, BatchNormalisedWeightsAverageOne) {
  const Case c;
  RolloutIsOptions options = Options("token", 1.5);
  options.batch_normalize = true;
  const RolloutIsWeights is = ComputeRolloutIsWeights(c.old_log_prob, c.rollout_log_prob, c.mask, options).value();
  const double mean = (1.5 + std::exp(-1.0) + 1 + 1 + 1.5) / 5;  // of the truncated weights
  EXPECT_THAT(Values(is.weights),
              ::testing::Pointwise(::testing::FloatNear(1e-5),
                                   std::vector<float>{static_cast<float>(1.5 / mean), static_cast<float>(std::exp(-1.0) / mean),
                                                      static_cast<float>(1 / mean), static_cast<float>(1 / mean),
                                                      static_cast<float>(1.5 / mean), 0}));
  EXPECT_NEAR(is.mean.item<double>(), 1.0, 1e-7);
  // At sequence level the rows' weights average 1: e^-0.5 and 2 (row 1 truncated).
  options = Options("sequence", 2.0);
  options.batch_normalize = true;
  const RolloutIsWeights sequence = ComputeRolloutIsWeights(c.old_log_prob, c.rollout_log_prob, c.mask, options).value();
  const double row_mean = (std::exp(-0.5) + 2) / 2;
  EXPECT_NEAR(Values(sequence.weights)[0], std::exp(-0.5) / row_mean, 1e-5);
  EXPECT_NEAR(Values(sequence.weights)[3], 2 / row_mean, 1e-5);
}

TEST(RolloutIsWeights, ResponsesWithoutTokensAreLeftOutOfTheMetrics) {
  const at::Tensor old = Doubles({0.5, 0.5, 3, 3}, {2, 2});
  const at::Tensor rollout = at::zeros({2, 2}, at::kDouble);
  const at::Tensor mask = Doubles({1, 1, 0, 0}, {2, 2});
  const RolloutIsWeights is = ComputeRolloutIsWeights(old, rollout, mask, Options("sequence", 10)).value();
  EXPECT_NEAR(is.mean.item<double>(), std::exp(1.0), 1e-7);
  EXPECT_NEAR(is.max.item<double>(), std::exp(1.0), 1e-7);
  EXPECT_NEAR(is.min.item<double>(), std::exp(1.0), 1e-7);
  EXPECT_THAT(Values(is.weights)[2], 0.0f);
}

TEST(RolloutIsWeights, HugeRatiosAreBoundedBeforeTheThreshold) {
  const at::Tensor old = Doubles({40, -40}, {1, 2});
  const RolloutIsWeights is =
      ComputeRolloutIsWeights(old, at::zeros({1, 2}, at::kDouble), at::ones({1, 2}), Options("token", 3)).value();
  EXPECT_THAT(Values(is.weights), ::testing::Pointwise(::testing::FloatNear(1e-6),
                                                        std::vector<float>{3, static_cast<float>(std::exp(-20.0))}));
  EXPECT_NEAR(is.max.item<double>(), std::exp(20.0), 1e-3);
  EXPECT_TRUE(std::isfinite(is.k3_kl.item<double>()));  // from the unbounded log-ratios, in float64
}

TEST(RolloutIsWeights, CarryNoGradient) {
  const Case c;
  const at::Tensor old = c.old_log_prob.clone().requires_grad_(true);
  const RolloutIsWeights is = ComputeRolloutIsWeights(old, c.rollout_log_prob, c.mask, Options("token", 2)).value();
  EXPECT_FALSE(is.weights.requires_grad());
}

TEST(RolloutIsWeights, BadOptionsAndInputsAreInvalidArgument) {
  const Case c;
  EXPECT_EQ(ComputeRolloutIsWeights(c.old_log_prob, c.rollout_log_prob, c.mask, Options("geometric", 2)).status().message(),
            "rollout_is: unknown level \"geometric\"; valid levels are token, sequence");
  EXPECT_EQ(ComputeRolloutIsWeights(c.old_log_prob, c.rollout_log_prob, c.mask, Options("token", 0)).status().message(),
            "rollout_is_threshold: must be > 0; got 0");
  const at::Tensor nan_old = c.old_log_prob.clone();
  nan_old[0][1] = std::nan("");
  EXPECT_THAT(std::string(ComputeRolloutIsWeights(nan_old, c.rollout_log_prob, c.mask, Options("token", 2)).status().message()),
              ::testing::HasSubstr("old_log_prob: 1 NaN"));
  EXPECT_FALSE(ComputeRolloutIsWeights(c.old_log_prob, at::zeros({2, 4}, at::kDouble), c.mask, Options("token", 2)).ok());
}

RolloutRejectionOptions Rejection(const char* level, double upper, double lower, double veto = 0) {
  RolloutRejectionOptions options;
  options.level = level;
  options.upper = upper;
  options.lower = lower;
  options.veto_threshold = veto;
  return options;
}

TEST(RolloutRejection, TokenLevelDropsTokensOutsideTheBounds) {
  const Case c;
  const RolloutRejection r =
      ComputeRolloutRejection(c.old_log_prob, c.rollout_log_prob, c.mask, Rejection("token", 2, 0.5)).value();
  // Ratios row 0: 1.65, 0.37 (out), 1; row 1: 1, 2.72 (out), masked.
  EXPECT_THAT(Values(r.keep), ::testing::ElementsAre(1, 0, 1, 1, 0, 0));
  EXPECT_NEAR(r.masked_fraction.item<double>(), 0.4, 1e-7);
  EXPECT_NEAR(r.seq_masked_fraction.item<double>(), 1.0, 1e-7);
  EXPECT_EQ(r.veto_fraction.item<double>(), 0);
  EXPECT_EQ(r.catastrophic_token_fraction.item<double>(), 0);
}

TEST(RolloutRejection, SequenceAndGeometricLevelsDropWholeResponses) {
  const Case c;
  // Products: row 0 e^-0.5 = 0.61 (in), row 1 e^1 = 2.72 (out).
  const RolloutRejection sequence =
      ComputeRolloutRejection(c.old_log_prob, c.rollout_log_prob, c.mask, Rejection("sequence", 2, 0.5)).value();
  EXPECT_THAT(Values(sequence.keep), ::testing::ElementsAre(1, 1, 1, 0, 0, 0));
  EXPECT_NEAR(sequence.masked_fraction.item<double>(), 0.4, 1e-7);
  EXPECT_NEAR(sequence.seq_masked_fraction.item<double>(), 0.5, 1e-7);
  // Geometric means: row 0 e^(-0.5 / 3) = 0.85 (in [1 / 1.2, 1.2]), row 1 e^(1 / 2) = 1.65 (out).
  const RolloutRejection geometric = ComputeRolloutRejection(c.old_log_prob, c.rollout_log_prob, c.mask,
                                                             Rejection("geometric", 1.2, 1 / 1.2)).value();
  EXPECT_THAT(Values(geometric.keep), ::testing::ElementsAre(1, 1, 1, 0, 0, 0));
  // At [1 / 1.1, 1.1] row 0's 0.85 is out too.
  const RolloutRejection tighter = ComputeRolloutRejection(c.old_log_prob, c.rollout_log_prob, c.mask,
                                                           Rejection("geometric", 1.1, 1 / 1.1)).value();
  EXPECT_THAT(Values(tighter.keep), ::testing::ElementsAre(0, 0, 0, 0, 0, 0));
}

TEST(RolloutRejection, TheVetoDropsEveryResponseWithACatastrophicToken) {
  const Case c;
  // Row 0 holds a token of ratio e^-1 = 0.37 < 0.5; row 1 none.
  const RolloutRejection r =
      ComputeRolloutRejection(c.old_log_prob, c.rollout_log_prob, c.mask, Rejection("", 2, 0.5, 0.5)).value();
  EXPECT_THAT(Values(r.keep), ::testing::ElementsAre(0, 0, 0, 1, 1, 0));
  EXPECT_NEAR(r.veto_fraction.item<double>(), 0.5, 1e-7);
  EXPECT_NEAR(r.catastrophic_token_fraction.item<double>(), 0.2, 1e-7);
  EXPECT_EQ(r.masked_fraction.item<double>(), 0);  // no level: nothing rejected by ratio bounds
}

TEST(RolloutRejection, BadOptionsAreInvalidArgument) {
  const Case c;
  EXPECT_EQ(ComputeRolloutRejection(c.old_log_prob, c.rollout_log_prob, c.mask, Rejection("geo", 2, 0.5)).status().message(),
            "rollout_rs: unknown level \"geo\"; valid levels are token, sequence, geometric");
  EXPECT_EQ(ComputeRolloutRejection(c.old_log_prob, c.rollout_log_prob, c.mask, Rejection("token", 2, 2)).status().message(),
            "rollout_rs thresholds: need 0 < lower < upper; got lower 2 and upper 2");
  EXPECT_FALSE(ComputeRolloutRejection(c.old_log_prob, c.rollout_log_prob, c.mask, Rejection("", 2, 0.5, -1)).ok());
  // Without a level the bounds are not used.
  EXPECT_TRUE(ComputeRolloutRejection(c.old_log_prob, c.rollout_log_prob, c.mask, Rejection("", 2, 2, 0.1)).ok());
}

}  // namespace
}  // namespace rollout::algorithms
