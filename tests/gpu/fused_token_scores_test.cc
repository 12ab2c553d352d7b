// The fused CUDA token-score kernels against the plain ATen computation in float32.
#include "models/fused_token_scores.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <tuple>

namespace rollout::models {
namespace {

struct Reference {
  at::Tensor log_probs, entropy, sum_pi_squared, grad;
};

// d/dlogits of sum(w1 * log_probs) + sum(w2 * entropy), all in float32.
Reference ReferenceScores(const at::Tensor& logits, const at::Tensor& targets,
                          const at::Tensor& w1, const at::Tensor& w2) {
  at::Tensor x = logits.detach().to(at::kFloat).set_requires_grad(true);
  const at::Tensor log_softmax = x.log_softmax(-1);
  const at::Tensor log_probs = log_softmax.gather(-1, targets.unsqueeze(-1)).squeeze(-1);
  const at::Tensor entropy = -(log_softmax.exp() * log_softmax).sum(-1);
  ((log_probs * w1).sum() + (entropy * w2).sum()).backward();
  const at::Tensor sum_pi_squared = log_softmax.detach().to(at::kDouble).mul(2).exp().sum(-1);
  return {log_probs.detach(), entropy.detach(), sum_pi_squared, x.grad()};
}

// Qwen2.5's vocabulary takes the kernels' 16-byte packs; an odd one, single elements.
class FusedTokenScoresTest
    : public ::testing::TestWithParam<std::tuple<c10::ScalarType, int64_t>> {};

TEST_P(FusedTokenScoresTest, MatchesFloat32ReferenceValuesAndGradients) {
  const auto [dtype, vocab] = GetParam();
  const at::TensorOptions cuda = at::TensorOptions().device(at::kCUDA);
  at::manual_seed(3);
  const int64_t rows = 37;
  const at::Tensor logits = (at::randn({rows, vocab}, cuda) * 3).to(dtype);
  const at::Tensor targets = at::randint(0, vocab, {rows}, cuda.dtype(at::kLong));
  const at::Tensor w1 = at::randn({rows}, cuda);
  const at::Tensor w2 = at::randn({rows}, cuda);
  const Reference want = ReferenceScores(logits, targets, w1, w2);

  at::Tensor x = logits.detach().clone().set_requires_grad(true);
  const auto [log_probs, entropy, sum_pi_squared] = FusedTokenScores(x, targets);
  ((log_probs * w1).sum() + (entropy * w2).sum()).backward();
  EXPECT_FALSE(sum_pi_squared.requires_grad());
  EXPECT_LT((sum_pi_squared.to(at::kDouble) / want.sum_pi_squared - 1).abs().max().item<double>(), 1e-4);
  EXPECT_EQ(log_probs.scalar_type(), at::kFloat);
  EXPECT_LT((log_probs - want.log_probs).abs().max().item<float>(), 1e-3);
  EXPECT_LT((entropy - want.entropy).abs().max().item<float>(), 1e-3);
  ASSERT_EQ(x.grad().scalar_type(), dtype);
  // Gradients are stored in the logits' dtype: compare relative to its resolution
  // (float32 within the fast exp's error).
  const double relative = dtype == at::kFloat ? 1e-5 : dtype == at::kHalf ? 1e-3 : 8e-3;
  const double scale = want.grad.abs().max().item<double>();
  EXPECT_LT((x.grad().to(at::kFloat) - want.grad).abs().max().item<double>(), relative * scale);
}

INSTANTIATE_TEST_SUITE_P(DtypesAndVocabularies, FusedTokenScoresTest,
                         ::testing::Combine(::testing::Values(at::kFloat, at::kBFloat16, at::kHalf),
                                            ::testing::Values(int64_t{151936}, int64_t{1001})));

TEST(FusedTokenScores, OnlyLogProbsUsedLeavesEntropyGradientOut) {
  const at::TensorOptions cuda = at::TensorOptions().device(at::kCUDA);
  at::Tensor x = at::randn({4, 1000}, cuda).set_requires_grad(true);
  const at::Tensor targets = at::randint(0, 1000, {4}, cuda.dtype(at::kLong));
  FusedTokenScores(x, targets).log_probs.sum().backward();
  const at::Tensor want = ReferenceScores(x, targets, at::ones({4}, cuda), at::zeros({4}, cuda)).grad;
  EXPECT_LT((x.grad() - want).abs().max().item<float>(), 1e-6);
}

// One dominant logit per row, met at different places of the rows' packs: the running
// sum of squares is rescaled with every new maximum, so sum_pi_squared is p_max^2 + ...
TEST(FusedTokenScores, SumPiSquaredOfPeakedRows) {
  const at::TensorOptions cuda = at::TensorOptions().device(at::kCUDA);
  const int64_t rows = 8, vocab = 151936;
  at::Tensor logits = at::randn({rows, vocab}, cuda);
  for (int64_t row = 0; row < rows; ++row) logits[row][row * 18000 + 7] = 12.0 + row;
  const at::Tensor targets = at::zeros({rows}, cuda.dtype(at::kLong));
  const at::Tensor want = logits.to(at::kDouble).softmax(-1).square().sum(-1);
  EXPECT_TRUE((want > 0.1).all().item<bool>()) << want;
  const at::Tensor got = FusedTokenScores(logits, targets).sum_pi_squared;
  EXPECT_LT((got.to(at::kDouble) / want - 1).abs().max().item<double>(), 1e-4);
}

}  // namespace
}  // namespace rollout::models
