#include "algorithms/entropy.h"

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

// -sum(p * log p), the textbook formula: exp overflows for large logits.
at::Tensor NaiveEntropy(const at::Tensor& logits) {
  const at::Tensor p = logits.exp() / logits.exp().sum(-1, /*keepdim=*/true);
  return -(p * p.log()).sum(-1);
}

TEST(EntropyFromLogits, HandComputedCase) {
  // Uniform over 3: ln 3 = 1.0986123. Logits ln [1, 2, 3]: p = [1, 2, 3] / 6 and
  // H = (1/6) ln 6 + (1/3) ln 3 + (1/2) ln 2 = 1.0114042647073518.
  const at::Tensor logits =
      at::tensor({0.0f, 0.0f, 0.0f, 0.0f, std::log(2.0f), std::log(3.0f)}).reshape({1, 2, 3});
  at::Tensor entropy = EntropyFromLogits(logits).value();
  ASSERT_EQ(entropy.sizes(), (std::vector<int64_t>{1, 2}));
  EXPECT_NEAR(entropy[0][0].item<float>(), std::log(3.0f), 1e-6);
  EXPECT_NEAR(entropy[0][1].item<float>(), 1.0114042647073518, 1e-6);
}

TEST(EntropyFromLogits, MatchesTheNaiveFormulaOnModerateLogits) {
  at::manual_seed(8);
  const at::Tensor logits = at::randn({3, 4, 17}) * 3;
  EXPECT_TRUE(at::allclose(EntropyFromLogits(logits).value(), NaiveEntropy(logits), 1e-5, 1e-6));
}

TEST(EntropyFromLogits, HugeLogitsStayFiniteAndExact) {
  // Logits 1e4 + [0, 1, 2, -3] (exact in float32) have the entropy of [0, 1, 2, -3]:
  // 0.8572841437217266 (PyTorch 1.13, float64, -sum(softmax * log_softmax)). The naive
  // formula overflows to NaN; logsumexp - sum(p * z) without the max shift loses ~1e-4 to
  // cancellation in float32.
  const at::Tensor logits = at::tensor({1e4f, 1e4f + 1, 1e4f + 2, 1e4f - 3}).reshape({1, 1, 4});
  EXPECT_TRUE(NaiveEntropy(logits).isnan().all().item<bool>());
  EXPECT_NEAR(EntropyFromLogits(logits).value().item<float>(), 0.8572841437217266, 1e-6);
  // Two tied huge logits: ln 2, whatever their magnitude or sign.
  for (float big : {1e4f, -1e4f, 3e38f}) {
    const at::Tensor tied = at::tensor({big, big}).reshape({1, 1, 2});
    EXPECT_NEAR(EntropyFromLogits(tied).value().item<float>(), std::log(2.0f), 1e-6) << big;
  }
}

TEST(EntropyFromLogits, ChunkingDoesNotChangeTheResult) {
  at::manual_seed(9);
  const at::Tensor logits = at::randn({7, 3, 11});
  const at::Tensor whole = EntropyFromLogits(logits, /*rows_per_chunk=*/100).value();
  EXPECT_TRUE(at::equal(whole, EntropyFromLogits(logits, /*rows_per_chunk=*/2).value()));
  EXPECT_TRUE(at::equal(whole, EntropyFromLogits(logits, /*rows_per_chunk=*/0).value()));
}

TEST(EntropyFromLogits, ComputesInAtLeastFloat32) {
  const at::Tensor logits = at::randn({2, 3, 5});
  const at::Tensor from_bf16 = EntropyFromLogits(logits.to(at::kBFloat16)).value();
  EXPECT_EQ(from_bf16.scalar_type(), at::kFloat);
  EXPECT_TRUE(
      at::allclose(from_bf16, NaiveEntropy(logits.to(at::kBFloat16).to(at::kFloat)), 1e-5, 1e-6));
  EXPECT_EQ(EntropyFromLogits(logits.to(at::kHalf)).value().scalar_type(), at::kFloat);
  EXPECT_EQ(EntropyFromLogits(logits.to(at::kDouble)).value().scalar_type(), at::kDouble);
}

TEST(EntropyFromLogits, GradientMatchesFiniteDifferences) {
  at::manual_seed(10);
  const at::Tensor start = at::randn({2, 3, 5}, at::kDouble) * 2;
  // A weighted sum of the entropies, so every position's gradient is tested.
  const at::Tensor weights = at::randn({2, 3}, at::kDouble);
  auto objective = [&](const at::Tensor& logits) {
    return (EntropyFromLogits(logits, /*rows_per_chunk=*/1).value() * weights).sum();
  };
  at::Tensor logits = start.clone().requires_grad_(true);
  objective(logits).backward();
  const at::Tensor numeric =
      NumericGradient([&](const at::Tensor& x) { return objective(x).item<double>(); }, start);
  EXPECT_TRUE(at::allclose(logits.grad(), numeric, 1e-6, 1e-8)) << "autograd:\n"
                                                                << logits.grad() << "\nnumeric:\n"
                                                                << numeric;
}

TEST(EntropyFromLogits, NonFiniteLogitsAreReportedWithTheirPosition) {
  for (float bad : {NAN, INFINITY, -INFINITY}) {
    at::Tensor logits = at::zeros({2, 3, 4});
    logits[1][2][3] = bad;
    absl::StatusOr<at::Tensor> entropy = EntropyFromLogits(logits);
    ASSERT_EQ(entropy.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(entropy.status().message().find("entropy: logits: "), std::string::npos)
        << entropy.status();
    EXPECT_NE(entropy.status().message().find("(first at [1, 2, 3])"), std::string::npos)
        << entropy.status();
  }
}

TEST(EntropyFromLogits, RejectsBadShapesAndDtypes) {
  EXPECT_EQ(EntropyFromLogits(at::zeros({2, 3})).status().message(),
            "entropy: logits: expected a floating [B, T, V] tensor; got Float [2, 3]");
  EXPECT_EQ(EntropyFromLogits(at::zeros({2, 3, 4}, at::kLong)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EntropyFromLogits(at::Tensor()).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(EntropyFromLogits, EmptyBatch) {
  absl::StatusOr<at::Tensor> entropy = EntropyFromLogits(at::zeros({0, 3, 4}));
  ASSERT_TRUE(entropy.ok()) << entropy.status();
  EXPECT_EQ(entropy->sizes(), (std::vector<int64_t>{0, 3}));
}

}  // namespace
}  // namespace rollout::algorithms
