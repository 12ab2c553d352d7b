#include "algorithms/pf_ppo.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace rollout::algorithms {
namespace {

using ::testing::HasSubstr;

at::Tensor Weights(const at::Tensor& scores, const char* method, double weight_pow = 2.0) {
  PfPpoOptions options;
  options.reweight_method = method;
  options.weight_pow = weight_pow;
  return PfPpoWeights(scores, options).value();
}

TEST(PfPpoWeights, EachMethodOnHandPickedScores) {
  const at::Tensor scores = at::tensor({-2.0, 0.0, 1.0, 3.0, 3.0}, at::kDouble);
  const at::Tensor eps = at::full({5}, 1e-8, at::kDouble);
  EXPECT_TRUE(at::allclose(Weights(scores, "pow"), at::tensor({4.0, 0.0, 1.0, 9.0, 9.0}, at::kDouble) + eps, 0, 1e-15));
  EXPECT_TRUE(at::allclose(Weights(scores, "pow", 1), at::tensor({2.0, 0.0, 1.0, 3.0, 3.0}, at::kDouble) + eps, 0, 1e-15));
  EXPECT_TRUE(at::allclose(Weights(scores, "max_min"), at::tensor({1.0, 0.0, 0.0, 1.0, 1.0}, at::kDouble) + eps, 0, 1e-15));
  EXPECT_TRUE(
      at::allclose(Weights(scores, "max_random"), at::tensor({0.1, 0.1, 0.1, 0.4, 0.4}, at::kDouble) + eps, 0, 1e-15));
}

TEST(PfPpoWeights, BadInputsAreNamed) {
  PfPpoOptions options;
  options.reweight_method = "min_max";
  EXPECT_THAT(PfPpoWeights(at::zeros({3}, at::kDouble), options).status().message(),
              HasSubstr("unknown method \"min_max\"; valid: pow, max_min, max_random"));
  EXPECT_THAT(PfPpoWeights(at::zeros({3, 1}, at::kDouble), PfPpoOptions()).status().message(),
              HasSubstr("scores must be a [B] floating tensor"));
  EXPECT_THAT(PfPpoWeights(at::tensor({1.0, NAN}, at::kDouble), PfPpoOptions()).status().message(),
              HasSubstr("pf_ppo: scores: 1 NaN"));
}

TEST(SampleWithReplacement, DrawsRowsInProportionToTheirWeights) {
  // Weights 1 : 3 : 0 (as good as never) : 4 over 40,000 draws: ~5,000 / 15,000 / 0 / 20,000.
  const at::Tensor weights = at::tensor({1.0, 3.0, 1e-8, 4.0}, at::kDouble);
  std::mt19937_64 generator(5);
  const std::vector<int64_t> rows = SampleWithReplacement(weights, 40000, generator);
  ASSERT_EQ(rows.size(), 40000u);
  std::vector<int> counts(4, 0);
  for (int64_t row : rows) ++counts[static_cast<size_t>(row)];
  EXPECT_NEAR(counts[0], 5000, 300);
  EXPECT_NEAR(counts[1], 15000, 400);
  EXPECT_EQ(counts[2], 0);
  EXPECT_NEAR(counts[3], 20000, 400);
  std::mt19937_64 same(5);
  EXPECT_EQ(SampleWithReplacement(weights, 40000, same), rows);
}

}  // namespace
}  // namespace rollout::algorithms
