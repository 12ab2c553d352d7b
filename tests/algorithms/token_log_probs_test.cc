#include "algorithms/token_log_probs.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

namespace rollout::algorithms {
namespace {

TEST(TokenLogProbs, HandComputedCase) {
  // One row, two positions, vocabulary 3. log_softmax([0, ln 2, ln 3]) = ln([1, 2, 3] / 6).
  at::Tensor logits = at::tensor({0.0f, std::log(2.0f), std::log(3.0f), 0.0f, 0.0f, 0.0f})
                          .reshape({1, 2, 3});
  at::Tensor tokens = at::tensor({2, 0}, at::kLong).reshape({1, 2});
  absl::StatusOr<at::Tensor> out = TokenLogProbs(logits, tokens);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0][0].item<float>(), std::log(3.0f / 6.0f), 1e-6);
  EXPECT_NEAR((*out)[0][1].item<float>(), std::log(1.0f / 3.0f), 1e-6);
}

TEST(TokenLogProbs, ChunkingDoesNotChangeTheResult) {
  at::Tensor logits = at::randn({7, 5, 11});
  at::Tensor tokens = at::randint(0, 11, {7, 5}, at::kLong);
  at::Tensor whole = TokenLogProbs(logits, tokens, /*rows_per_chunk=*/100).value();
  at::Tensor chunked = TokenLogProbs(logits, tokens, /*rows_per_chunk=*/2).value();
  EXPECT_TRUE(at::equal(whole, chunked));
  at::Tensor reference = logits.log_softmax(-1).gather(-1, tokens.unsqueeze(-1)).squeeze(-1);
  EXPECT_TRUE(at::allclose(whole, reference));
}

TEST(TokenLogProbs, LowPrecisionLogitsGiveFloat32) {
  at::Tensor logits = at::randn({2, 3, 4}).to(at::kBFloat16);
  at::Tensor out = TokenLogProbs(logits, at::zeros({2, 3}, at::kLong)).value();
  EXPECT_EQ(out.scalar_type(), at::kFloat);
}

TEST(TokenLogProbs, ShapeAndRangeErrors) {
  at::Tensor logits = at::randn({2, 3, 4});
  EXPECT_FALSE(TokenLogProbs(logits, at::zeros({2, 4}, at::kLong)).ok());
  EXPECT_FALSE(TokenLogProbs(logits, at::zeros({2, 3}, at::kInt)).ok());
  EXPECT_FALSE(TokenLogProbs(logits, at::full({2, 3}, 4, at::kLong)).ok());
  EXPECT_FALSE(TokenLogProbs(logits, at::full({2, 3}, -1, at::kLong)).ok());
}

TEST(TokenLogProbs, EmptyBatch) {
  absl::StatusOr<at::Tensor> out =
      TokenLogProbs(at::randn({0, 3, 4}), at::zeros({0, 3}, at::kLong));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->size(0), 0);
}

}  // namespace
}  // namespace rollout::algorithms
