#include "algorithms/masked_ops.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace rollout::algorithms {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

at::Tensor Doubles(std::vector<double> values, at::IntArrayRef shape) {
  return at::tensor(values, at::kDouble).reshape(shape);
}

TEST(MaskedMean, AveragesSelectedElements) {
  // (1 + 2 + 4) / 3 over the whole tensor; per row (1 + 2) / 2 and 4 / 1.
  at::Tensor values = Doubles({1, 2, 3, 4, 5, 6}, {2, 3});
  at::Tensor mask = Doubles({1, 1, 0, 1, 0, 0}, {2, 3}) > 0;
  EXPECT_NEAR(MaskedMean(values, mask).item<double>(), 7.0 / 3.0, 1e-7);
  at::Tensor rows = MaskedMean(values, mask, /*dim=*/1);
  EXPECT_NEAR(rows[0].item<double>(), 1.5, 1e-7);
  EXPECT_NEAR(rows[1].item<double>(), 4.0, 1e-7);
}

TEST(MaskedMean, IntegerMaskAlongTheLastDim) {
  // Rows (0.5 - 0.5 + 0) / 3 = 0 and (-1 + 0) / 2 = -0.5 (the 7 is masked).
  at::Tensor values = Doubles({0.5, -0.5, 0, -1, 0, 7}, {2, 3});
  at::Tensor mask = at::tensor({1, 1, 1, 1, 1, 0}, at::kLong).reshape({2, 3});
  at::Tensor rows = MaskedMean(values, mask, /*dim=*/-1);
  EXPECT_NEAR(rows[0].item<double>(), 0.0, 1e-7);
  EXPECT_NEAR(rows[1].item<double>(), -0.5, 1e-7);
}

TEST(MaskedMean, AllMaskedGivesZero) {
  // 0 / (0 + 1e-8): nothing selected, nothing averaged.
  EXPECT_EQ(MaskedMean(Doubles({3, 4}, {1, 2}), at::zeros({1, 2})).item<double>(), 0.0);
}

TEST(MaskedMean, RowMaskBroadcastsOverTokens) {
  // mask [2, 1] selects row 0 entirely: mean(1, 2) = 1.5, per row 1.5 and 0.
  at::Tensor values = Doubles({1, 2, 3, 4}, {2, 2});
  at::Tensor mask = Doubles({1, 0}, {2, 1});
  EXPECT_NEAR(MaskedMean(values, mask).item<double>(), 1.5, 1e-7);
  at::Tensor rows = MaskedMean(values, mask, /*dim=*/1);
  EXPECT_NEAR(rows[0].item<double>(), 1.5, 1e-7);
  EXPECT_NEAR(rows[1].item<double>(), 0.0, 1e-7);
}

TEST(MaskedVar, UnbiasedAndBiased) {
  // Selected 1, 2, 3 (4 masked): mean 2, squared deviations 1 + 0 + 1 = 2;
  // biased 2 / 3, unbiased 2 / 2 = 1.
  at::Tensor values = Doubles({1, 2, 3, 4}, {1, 4});
  at::Tensor mask = Doubles({1, 1, 1, 0}, {1, 4});
  EXPECT_NEAR(MaskedVar(values, mask, /*unbiased=*/true).value().item<double>(), 1.0, 1e-7);
  EXPECT_NEAR(MaskedVar(values, mask, /*unbiased=*/false).value().item<double>(), 2.0 / 3.0,
              1e-7);
}

TEST(MaskedVar, ValuesBroadcastAgainstALargerMask) {
  // values [2, 1] against mask [2, 2] select 1, 1, 3: mean 5/3, squared deviations
  // 4/9 + 4/9 + 16/9 = 24/9, unbiased 24/9 / 2 = 4/3.
  at::Tensor values = Doubles({1, 3}, {2, 1});
  at::Tensor mask = Doubles({1, 1, 1, 0}, {2, 2});
  absl::StatusOr<at::Tensor> variance = MaskedVar(values, mask);
  ASSERT_TRUE(variance.ok()) << variance.status();
  EXPECT_NEAR(variance->item<double>(), 4.0 / 3.0, 1e-7);
}

TEST(MaskedVar, RowMaskCountsEveryTokenOfTheRow) {
  // mask [2, 1] selects row 0 = (1, 3): mean 2, squared deviations 2, unbiased 2 / 1.
  at::Tensor values = Doubles({1, 3, 100, -100}, {2, 2});
  absl::StatusOr<at::Tensor> variance = MaskedVar(values, Doubles({1, 0}, {2, 1}));
  ASSERT_TRUE(variance.ok()) << variance.status();
  EXPECT_NEAR(variance->item<double>(), 2.0, 1e-7);
}

TEST(MaskedVar, UnbiasedNeedsTwoSelectedElements) {
  at::Tensor values = Doubles({1, 2, 3}, {1, 3});
  absl::StatusOr<at::Tensor> none = MaskedVar(values, at::zeros({1, 3}));
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find("selects no element"), std::string::npos);
  absl::StatusOr<at::Tensor> one = MaskedVar(values, Doubles({0, 1, 0}, {1, 3}));
  EXPECT_EQ(one.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(one.status().message().find("one element"), std::string::npos);
}

TEST(MaskedWhiten, CentresAndScalesSelectedElements) {
  // Selected 1, 2, 3: mean ~2, unbiased var ~1, so (x - 2) / sqrt(1 + 1e-8); the masked
  // 100 is transformed with the same mean and scale: ~98. Exact literals from a float64
  // plain-Python transcription of verl's masked_whiten, which keeps masked_mean's 1e-8
  // (mean = 6 / (3 + 1e-8), hence the 6.7e-9 in the middle).
  at::Tensor values = Doubles({1, 2, 3, 100}, {1, 4});
  at::Tensor mask = Doubles({1, 1, 1, 0}, {1, 4});
  at::Tensor whitened = MaskedWhiten(values, mask).value();
  at::Tensor expected = Doubles({-0.9999999900000003, 6.666666529913105e-09, 1.0000000033333334,
                                 97.99999968000002},
                                {1, 4});
  EXPECT_TRUE(at::allclose(whitened, expected, 1e-12, 1e-12)) << whitened - expected;
  at::Tensor unshifted = MaskedWhiten(values, mask, /*shift_mean=*/false).value();
  at::Tensor mean = at::full({1, 4}, 6 / (3 + 1e-8), at::kDouble);
  EXPECT_TRUE(at::allclose(unshifted, expected + mean, 1e-12, 1e-12)) << unshifted;
}

TEST(MaskedWhiten, SelectedElementsGetMeanZeroAndUnitVariance) {
  at::manual_seed(4);
  at::Tensor values = at::randn({4, 9}, at::kDouble) * 3 + 5;
  at::Tensor mask = at::rand({4, 9}) > 0.3;
  mask[0][0] = true;
  mask[0][1] = true;
  at::Tensor whitened = MaskedWhiten(values, mask).value();
  // The whitening runs in the values' dtype, but the mean is over ~25 terms of size ~1:
  // rounding leaves ~1e-9 in some draws, so the bound is 1e-7, far below a real offset.
  EXPECT_NEAR(MaskedMean(whitened, mask).item<double>(), 0.0, 1e-7);
  EXPECT_NEAR(MaskedVar(whitened, mask).value().item<double>(), 1.0, 1e-6);
}

TEST(MaskedWhiten, PropagatesTheVarianceError) {
  EXPECT_FALSE(MaskedWhiten(Doubles({1, 2}, {1, 2}), Doubles({1, 0}, {1, 2})).ok());
}

TEST(CheckFinite, FiniteAndNonFloatingTensorsPass) {
  EXPECT_TRUE(CheckFinite(Doubles({1, -2, 1e300}, {3}), "x").ok());
  EXPECT_TRUE(CheckFinite(at::tensor({1, 2}, at::kLong), "ids").ok());
  EXPECT_TRUE(CheckFinite(at::Tensor(), "undefined").ok());
}

TEST(CheckFinite, CountsNanAndInfAndNamesTheFirst) {
  at::Tensor x = Doubles({1, kNan, -kInf, kNan}, {2, 2});
  absl::Status status = CheckFinite(x, "values");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "values: 2 NaN and 1 infinite values (first at [0, 1])");
}

TEST(CheckFinite, CatchesLowPrecisionInfinity) {
  at::Tensor x = at::tensor({1.0f, 0.0f}).to(at::kBFloat16);
  x[1] = std::numeric_limits<float>::infinity();
  absl::Status status = CheckFinite(x, "logits");
  EXPECT_EQ(status.message(), "logits: 0 NaN and 1 infinite values (first at [1])");
}

TEST(DeferredFiniteChecks, QueueChecksAndReportTheFirstFailureOnResolve) {
  const at::Tensor bad = Doubles({1, kNan, kInf}, {3});
  {
    DeferredFiniteChecks deferred;
    EXPECT_TRUE(CheckFinite(Doubles({1, 2}, {2}), "fine").ok());
    EXPECT_TRUE(CheckFinite(bad, "first").ok());  // queued, not read
    EXPECT_TRUE(CheckFinite(bad * 2, "second").ok());
    EXPECT_EQ(deferred.Resolve().message(), "first: 1 NaN and 1 infinite values (first at [1])");
    EXPECT_TRUE(deferred.Resolve().ok());  // the queue was emptied
    EXPECT_TRUE(CheckFinite(Doubles({3}, {1}), "later").ok());
    EXPECT_TRUE(deferred.Resolve().ok());
    EXPECT_TRUE(CheckFinite(bad, "dropped").ok());  // unresolved at the end of the scope
  }
  EXPECT_EQ(CheckFinite(bad, "now").message(), "now: 1 NaN and 1 infinite values (first at [1])");
}

}  // namespace
}  // namespace rollout::algorithms
