#include "algorithms/value_loss.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tests/support/numeric_gradient.h"

namespace rollout::algorithms {
namespace {

using ::rollout::testing::NumericGradient;

at::Tensor Doubles(std::vector<double> values, std::vector<int64_t> shape) {
  return at::tensor(values, at::kDouble).reshape(shape);
}

// old_values 0, cliprange_value 0.5 (clipped prediction = clamp(vpred, -0.5, 0.5)):
//   vpred  0.2, return 0: errors 0.04 / 0.04            -> 0.04
//   vpred  1.0, return 2: errors 1 / (0.5 - 2)^2 = 2.25  -> 2.25 (clipped larger: vf_clipfrac)
//   vpred -1.0, return 0: errors 1 / 0.25                -> 1
//   vpred  0.3, return 1: errors 0.49 / 0.49             -> 0.49
//   vpred 10,   return -10: masked
// token-mean: 0.5 * (0.04 + 2.25 + 1 + 0.49) / 4 = 0.5 * 3.78 / 4 = 0.4725; vf_clipfrac 1 / 4.
at::Tensor HandVpreds() { return Doubles({0.2, 1.0, -1.0, 0.3, 10}, {1, 5}); }
at::Tensor HandReturns() { return Doubles({0, 2, 0, 1, -10}, {1, 5}); }
at::Tensor HandMask() { return Doubles({1, 1, 1, 1, 0}, {1, 5}); }

TEST(ValueLoss, HandComputedCase) {
  ValueLossResult result =
      ComputeValueLoss(HandVpreds(), HandReturns(), at::zeros({1, 5}, at::kDouble), HandMask(),
                       ValueLossOptions())
          .value();
  EXPECT_NEAR(result.loss.item<double>(), 0.4725, 1e-8);
  EXPECT_NEAR(result.vf_clipfrac.item<double>(), 0.25, 1e-8);
}

TEST(ValueLoss, AggregatesWithTheRequestedMode) {
  // seq-mean-token-sum-norm with horizon 2: 0.5 * 3.78 / 2 = 0.945.
  ValueLossOptions options;
  options.loss_agg_mode = "seq-mean-token-sum-norm";
  options.loss_scale_factor = 2;
  ValueLossResult result = ComputeValueLoss(HandVpreds(), HandReturns(),
                                            at::zeros({1, 5}, at::kDouble), HandMask(), options)
                               .value();
  EXPECT_NEAR(result.loss.item<double>(), 0.945, 1e-12);
}

TEST(ValueLoss, WideClipRangeGivesHalfTheMeanSquaredError) {
  at::manual_seed(5);
  const at::Tensor vpreds = at::randn({3, 4}, at::kDouble);
  const at::Tensor returns = at::randn({3, 4}, at::kDouble);
  const at::Tensor mask = at::ones({3, 4});
  ValueLossOptions options;
  options.cliprange_value = 1e6;
  ValueLossResult result =
      ComputeValueLoss(vpreds, returns, at::randn({3, 4}, at::kDouble), mask, options).value();
  // token-mean divides by count + 1e-8 (verl's masked_mean): a 1e-9 relative difference.
  EXPECT_NEAR(result.loss.item<double>(), 0.5 * (vpreds - returns).square().mean().item<double>(),
              1e-8);
  EXPECT_EQ(result.vf_clipfrac.item<double>(), 0.0);
}

TEST(ValueLoss, MaskedTokensChangeNothing) {
  at::manual_seed(6);
  const at::Tensor vpreds = at::randn({3, 4}, at::kDouble);
  const at::Tensor returns = at::randn({3, 4}, at::kDouble);
  const at::Tensor old_values = at::randn({3, 4}, at::kDouble);
  const at::Tensor mask = Doubles({1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0}, {3, 4});
  const at::Tensor garbage = at::randn({3, 4}, at::kDouble) * 100 * (1 - mask);
  at::Tensor clean_v = vpreds.clone().requires_grad_(true);
  at::Tensor dirty_v = (vpreds + garbage).requires_grad_(true);
  ValueLossResult clean = ComputeValueLoss(clean_v, returns, old_values, mask, {}).value();
  ValueLossResult dirty =
      ComputeValueLoss(dirty_v, returns - garbage, old_values + 2 * garbage, mask, {}).value();
  clean.loss.backward();
  dirty.loss.backward();
  EXPECT_NEAR(clean.loss.item<double>(), dirty.loss.item<double>(), 1e-12);
  EXPECT_NEAR(clean.vf_clipfrac.item<double>(), dirty.vf_clipfrac.item<double>(), 1e-12);
  EXPECT_TRUE(at::allclose(clean_v.grad(), dirty_v.grad(), 0, 1e-12));
  EXPECT_TRUE(at::equal(dirty_v.grad() * (1 - mask), at::zeros_like(mask)));
}

TEST(ValueLoss, GradientMatchesFiniteDifferences) {
  // vpreds - old_values spread over [-1, 1] with cliprange 0.5, so both branches of the max
  // are exercised; kinks (|vpreds - old_values| = 0.5, or equal errors) are kept 1e-4 away.
  at::manual_seed(7);
  const at::Tensor old_values = at::randn({3, 5}, at::kDouble);
  const at::Tensor step = at::rand({3, 5}, at::kDouble) * 2 - 1;
  const at::Tensor returns = old_values + at::randn({3, 5}, at::kDouble);
  ASSERT_GT((step.abs() - 0.5).abs().min().item<double>(), 1e-4);
  const at::Tensor mask = Doubles({1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0}, {3, 5});
  for (const char* mode : {"token-mean", "seq-mean-token-mean"}) {
    ValueLossOptions options;
    options.loss_agg_mode = mode;
    auto loss_at = [&](const at::Tensor& vpreds) {
      return ComputeValueLoss(vpreds, returns, old_values, mask, options)
          .value()
          .loss.item<double>();
    };
    at::Tensor vpreds = (old_values + step).requires_grad_(true);
    ComputeValueLoss(vpreds, returns, old_values, mask, options).value().loss.backward();
    const at::Tensor numeric = NumericGradient(loss_at, vpreds.detach());
    EXPECT_TRUE(at::allclose(vpreds.grad(), numeric, 1e-6, 1e-8)) << mode << "\nautograd:\n"
                                                                  << vpreds.grad() << "\nnumeric:\n"
                                                                  << numeric;
  }
}

TEST(ValueLoss, RejectsBadOptionsAndInputsNamingThem) {
  const at::Tensor x = at::zeros({2, 3});
  const at::Tensor mask = at::ones({2, 3});
  const at::Tensor inf_returns =
      at::tensor({0.0f, INFINITY, 0.0f, 0.0f, 0.0f, 0.0f}).reshape({2, 3});
  ValueLossOptions negative;
  negative.cliprange_value = -0.5;
  ValueLossOptions bad_mode;
  bad_mode.loss_agg_mode = "mean";
  struct Case {
    at::Tensor returns;
    at::Tensor old_values;
    ValueLossOptions options;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {x, x, negative, "value loss: cliprange_value: must be >= 0; got -0.5"},
      {x, x, bad_mode, "value loss: loss_agg_mode: unknown mode \"mean\"; valid modes are"},
      {inf_returns, x, ValueLossOptions(), "value loss: returns: 0 NaN and 1 infinite values (first at [0, 1])"},
      {x, at::zeros({3, 2}), ValueLossOptions(), "value loss: old_values: shape [3, 2] does not match"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ValueLossResult> result =
        ComputeValueLoss(x, c.returns, c.old_values, mask, c.options);
    ASSERT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << c.expected;
    EXPECT_EQ(result.status().message().rfind(c.expected, 0), 0u) << result.status();
  }
}

}  // namespace
}  // namespace rollout::algorithms
