// The policy losses' shared contract (masking, dtype, options, errors) and PPO's vanilla
// and GSPO losses; the other modes are in policy_loss_modes_test.cc.
#include "algorithms/policy_loss.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "algorithms/loss_aggregation.h"
#include "algorithms/masked_ops.h"
#include "tests/algorithms/policy_loss_cases.h"
#include "tests/support/numeric_gradient.h"

namespace rollout::algorithms {
namespace {

using ::rollout::testing::NumericGradient;
using policy_loss_testing::Doubles;
using policy_loss_testing::kAggModes;
using policy_loss_testing::kLossModes;
using policy_loss_testing::Options;

TEST(PolicyLossVanilla, HandComputedCase) {
  // old_log_prob 0, so ratio r = exp(log_prob); clip 0.2 -> [0.8, 1.2]; clip_ratio_c 3.
  //   r = 1.5, A = +1: max(-1.5, -1.2) = -1.2   (clipped term larger: counts in pg_clipfrac)
  //   r = 0.5, A = +1: max(-0.5, -0.8) = -0.5
  //   r = 1.1, A = -1: max( 1.1,  1.1) =  1.1;  min(1.1, 3) = 1.1
  //   r = 4,   A = -1: max( 4,    1.2) =  4;    min(4, 3) = 3   (dual clip: pg_clipfrac_lower)
  //   r = 0.5, A = -1: max( 0.5,  0.8) =  0.8   (clipped term larger: pg_clipfrac)
  //   r = e^5, A = -1: masked
  // token-mean: (-1.2 - 0.5 + 1.1 + 3 + 0.8) / 5 = 3.2 / 5 = 0.64; pg_clipfrac 2 / 5;
  // pg_clipfrac_lower 1 / 5; ppo_kl = -ln(1.5 * 0.5 * 1.1 * 4 * 0.5) / 5 = -ln(1.65) / 5.
  const at::Tensor log_prob = Doubles(
      {std::log(1.5), std::log(0.5), std::log(1.1), std::log(4.0), std::log(0.5), 5}, {1, 6});
  const at::Tensor advantages = Doubles({1, 1, -1, -1, -1, -1}, {1, 6});
  const at::Tensor mask = Doubles({1, 1, 1, 1, 1, 0}, {1, 6});
  PolicyLossResult result =
      ComputePolicyLoss(at::zeros_like(log_prob), log_prob, advantages, mask, Options()).value();
  EXPECT_NEAR(result.loss.item<double>(), 0.64, 1e-8);
  EXPECT_NEAR(result.pg_clipfrac.item<double>(), 0.4, 1e-8);
  EXPECT_NEAR(result.pg_clipfrac_lower.item<double>(), 0.2, 1e-8);
  EXPECT_NEAR(result.ppo_kl.item<double>(), -std::log(1.65) / 5, 1e-8);
}

TEST(PolicyLoss, TokenWeightsScaleEachTokensTermAndItsGradient) {
  at::manual_seed(3);
  const at::Tensor old_log_prob = at::randn({2, 4}, at::kDouble) * 0.1;
  const at::Tensor advantages = at::randn({2, 4}, at::kDouble);
  const at::Tensor mask = Doubles({1, 1, 1, 0, 1, 1, 0, 0}, {2, 4});
  const at::Tensor weights = Doubles({0.5, 2, 1, 7, 1.5, 0.25, 9, 9}, {2, 4});
  for (const char* mode : {"vanilla", "gspo"}) {
    const at::Tensor log_prob = (old_log_prob + at::randn({2, 4}, at::kDouble) * 0.3).requires_grad_(true);
    const PolicyLossResult plain = ComputePolicyLoss(old_log_prob, log_prob, advantages, mask, Options(mode)).value();
    plain.loss.backward();
    const at::Tensor plain_grad = log_prob.grad().clone();
    log_prob.mutable_grad().zero_();
    const PolicyLossResult weighted =
        ComputePolicyLoss(old_log_prob, log_prob, advantages, mask, Options(mode), weights).value();
    weighted.loss.backward();
    // Each token's term times its weight, aggregated the same way: per token, the
    // weighted loss's gradient is the weight times the plain one's.
    const at::Tensor weighted_grad = log_prob.grad();
    EXPECT_TRUE(at::allclose(weighted_grad, plain_grad * weights * mask)) << mode;
    EXPECT_TRUE(at::allclose(plain.pg_clipfrac, weighted.pg_clipfrac)) << mode;  // metrics unweighted
  }
  const PolicyLossResult ones = ComputePolicyLoss(old_log_prob, old_log_prob, advantages, mask, Options(),
                                                  at::ones({2, 4}, at::kDouble)).value();
  const PolicyLossResult none = ComputePolicyLoss(old_log_prob, old_log_prob, advantages, mask, Options()).value();
  EXPECT_DOUBLE_EQ(ones.loss.item<double>(), none.loss.item<double>());
  EXPECT_FALSE(ComputePolicyLoss(old_log_prob, old_log_prob, advantages, mask, Options(),
                                 at::ones({2, 3}, at::kDouble)).ok());
}

TEST(PolicyLossVanilla, RatioOneGivesMinusMeanAdvantageAndNoClipping) {
  at::manual_seed(1);
  const at::Tensor log_prob = at::randn({3, 5}, at::kDouble);
  const at::Tensor advantages = at::randn({3, 5}, at::kDouble);
  const at::Tensor mask = Doubles({1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0}, {3, 5});
  PolicyLossResult result =
      ComputePolicyLoss(log_prob, log_prob, advantages, mask, Options()).value();
  EXPECT_NEAR(result.loss.item<double>(), -MaskedMean(advantages, mask).item<double>(), 1e-12);
  EXPECT_EQ(result.pg_clipfrac.item<double>(), 0.0);
  EXPECT_EQ(result.pg_clipfrac_lower.item<double>(), 0.0);
  EXPECT_EQ(result.ppo_kl.item<double>(), 0.0);
}

TEST(PolicyLossVanilla, AggregatesWithTheRequestedMode) {
  // At ratio 1 the per-token loss is -A, so the loss is AggregateLoss(-A) for every mode.
  at::manual_seed(2);
  const at::Tensor log_prob = at::randn({3, 4}, at::kDouble);
  const at::Tensor advantages = at::randn({3, 4}, at::kDouble);
  const at::Tensor mask = Doubles({1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1}, {3, 4});
  for (const std::string& mode : kAggModes) {
    PolicyLossOptions options = Options();
    options.loss_agg_mode = mode;
    options.loss_scale_factor = 7;
    PolicyLossResult result =
        ComputePolicyLoss(log_prob, log_prob, advantages, mask, options).value();
    EXPECT_NEAR(result.loss.item<double>(),
                AggregateLoss(-advantages, mask, mode, 7).value().item<double>(), 1e-12)
        << mode;
  }
}

TEST(PolicyLossVanilla, ClipHigherOnlyMovesTheUpperBound) {
  // clip_ratio 0.2, clip_ratio_high 0.28: the interval is [0.8, 1.28].
  //   r = 1.25, A = +1: inside -> -1.25 (symmetric clipping would give -1.2)
  //   r = 1.3,  A = +1: clipped at 1.28 -> -1.28
  //   r = 0.75, A = -1: clipped at 0.8 -> 0.8 (the lower bound is unchanged)
  const at::Tensor log_prob = Doubles({std::log(1.25), std::log(1.3), std::log(0.75)}, {3, 1});
  const at::Tensor advantages = Doubles({1, 1, -1}, {3, 1});
  const at::Tensor mask = at::ones({3, 1});
  PolicyLossOptions options = Options();
  options.clip_ratio_high = 0.28;
  options.loss_agg_mode = "seq-mean-token-sum";  // one token per row: mean of token losses
  PolicyLossResult result =
      ComputePolicyLoss(at::zeros_like(log_prob), log_prob, advantages, mask, options).value();
  // (-1.25 - 1.28 + 0.8) / 3; clipped: the second and third tokens.
  EXPECT_NEAR(result.loss.item<double>(), (-1.25 - 1.28 + 0.8) / 3, 1e-12);
  EXPECT_NEAR(result.pg_clipfrac.item<double>(), 2.0 / 3, 1e-8);

  // clip_ratio_low 0.3 alone widens the lower side only: [0.7, 1.2] -> -1.2, -1.2, 0.75.
  options.clip_ratio_high = 0;
  options.clip_ratio_low = 0.3;
  result = ComputePolicyLoss(at::zeros_like(log_prob), log_prob, advantages, mask, options).value();
  EXPECT_NEAR(result.loss.item<double>(), (-1.2 - 1.2 + 0.75) / 3, 1e-12);
}

TEST(PolicyLossVanilla, DualClipEngagesOnlyForNegativeAdvantages) {
  // r = 5: A = -1 -> max(5, 1.2) = 5, capped at clip_ratio_c = 3; A = +1 -> max(-5, -1.2) =
  // -1.2, no cap. r = 2, A = -1 -> 2 < 3, no cap.
  const at::Tensor log_prob = Doubles({std::log(5.0), std::log(5.0), std::log(2.0)}, {3, 1});
  const at::Tensor advantages = Doubles({-1, 1, -1}, {3, 1});
  const at::Tensor mask = at::ones({3, 1});
  PolicyLossOptions options = Options();
  options.loss_agg_mode = "seq-mean-token-sum";
  PolicyLossResult result =
      ComputePolicyLoss(at::zeros_like(log_prob), log_prob, advantages, mask, options).value();
  EXPECT_NEAR(result.loss.item<double>(), (3 - 1.2 + 2) / 3, 1e-12);
  EXPECT_NEAR(result.pg_clipfrac_lower.item<double>(), 1.0 / 3, 1e-8);

  // A looser bound of 10 no longer caps r = 5.
  options.clip_ratio_c = 10;
  result = ComputePolicyLoss(at::zeros_like(log_prob), log_prob, advantages, mask, options).value();
  EXPECT_NEAR(result.loss.item<double>(), (5 - 1.2 + 2) / 3, 1e-12);
  EXPECT_EQ(result.pg_clipfrac_lower.item<double>(), 0.0);
}

TEST(PolicyLossVanilla, ClampsTheLogRatioAtTwenty) {
  // log_prob - old_log_prob = 50 is clamped to 20 before exp, as in verl: ppo_kl sees -20, and
  // with A = -1 the dual clip caps the loss at clip_ratio_c = 3 (with no gradient).
  at::Tensor log_prob = Doubles({50}, {1, 1}).requires_grad_(true);
  PolicyLossResult result = ComputePolicyLoss(at::zeros({1, 1}, at::kDouble), log_prob,
                                              Doubles({-1}, {1, 1}), at::ones({1, 1}), Options())
                                .value();
  result.loss.backward();
  // One token: token-mean and the masked mean divide by 1 + 1e-8.
  EXPECT_NEAR(result.loss.item<double>(), 3.0, 1e-7);
  EXPECT_NEAR(result.ppo_kl.item<double>(), -20.0, 1e-6);
  EXPECT_EQ(log_prob.grad().item<double>(), 0.0);
}

TEST(PolicyLossVanilla, GradientMatchesFiniteDifferences) {
  // Ratios e^u with u in [-1, 1] straddle both clip bounds; the last column has r = 4 and
  // A < 0, where the dual clip makes the loss flat. Points within 1e-4 of a kink (r = 0.8,
  // 1.2 or the dual-clip crossing) are excluded by construction below.
  at::manual_seed(3);
  at::Tensor delta = at::rand({4, 6}, at::kDouble) * 2 - 1;
  delta.select(1, 5).fill_(std::log(4.0));
  at::Tensor advantages = at::randn({4, 6}, at::kDouble);
  advantages.select(1, 5).fill_(-0.7);
  const at::Tensor ratio = delta.exp();
  for (double kink : {0.8, 1.2}) ASSERT_GT((ratio - kink).abs().min().item<double>(), 1e-4);
  const at::Tensor old_log_prob = at::randn({4, 6}, at::kDouble);
  const at::Tensor mask = Doubles({1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1,  //
                                   1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1},
                                  {4, 6});
  for (const std::string& mode : kAggModes) {
    PolicyLossOptions options = Options();
    options.loss_agg_mode = mode;
    auto loss_at = [&](const at::Tensor& log_prob) {
      return ComputePolicyLoss(old_log_prob, log_prob, advantages, mask, options)
          .value()
          .loss.item<double>();
    };
    at::Tensor log_prob = (old_log_prob + delta).requires_grad_(true);
    ComputePolicyLoss(old_log_prob, log_prob, advantages, mask, options).value().loss.backward();
    const at::Tensor numeric = NumericGradient(loss_at, log_prob.detach());
    EXPECT_TRUE(at::allclose(log_prob.grad(), numeric, /*rtol=*/1e-6, /*atol=*/1e-8))
        << mode << "\nautograd:\n"
        << log_prob.grad() << "\nnumeric:\n"
        << numeric;
  }
}

TEST(PolicyLossGspo, HandComputedCase) {
  // old_log_prob 0; rows (log_prob, A, mask):
  //   [ln 1.1, 0], [1, 2],   [1, 1]: s = exp(ln 1.1 / 2) = sqrt(1.1), inside [0.8, 1.2]:
  //                                  row mean of -A s = -1.5 sqrt(1.1)
  //   [ln 2,   0], [1, 1],   [1, 1]: s = sqrt(2) -> clipped to 1.2: row mean -1.2
  //   [ln 0.9, 5], [-1, -1], [1, 0]: s = 0.9 (the masked token does not count): 0.9
  // seq-mean-token-mean: (-1.5 sqrt(1.1) - 1.2 + 0.9) / 3 = -0.6244044224630537 (also by
  // PyTorch 1.13 following verl's compute_policy_loss_gspo). pg_clipfrac 2 / 5;
  // ppo_kl = -(ln 1.1 + ln 2 + ln 0.9) / 5 = -ln(1.98) / 5.
  const at::Tensor log_prob =
      Doubles({std::log(1.1), 0, std::log(2.0), 0, std::log(0.9), 5}, {3, 2});
  const at::Tensor advantages = Doubles({1, 2, 1, 1, -1, -1}, {3, 2});
  const at::Tensor mask = Doubles({1, 1, 1, 1, 1, 0}, {3, 2});
  PolicyLossOptions options = Options("gspo");
  options.loss_agg_mode = "token-mean";  // ignored: gspo aggregates per sequence, as verl
  PolicyLossResult result =
      ComputePolicyLoss(at::zeros_like(log_prob), log_prob, advantages, mask, options).value();
  EXPECT_NEAR(result.loss.item<double>(), -0.6244044224630537, 1e-8);
  EXPECT_NEAR(result.pg_clipfrac.item<double>(), 0.4, 1e-8);
  EXPECT_EQ(result.pg_clipfrac_lower.item<double>(), 0.0);
  EXPECT_NEAR(result.ppo_kl.item<double>(), -std::log(1.98) / 5, 1e-8);
}

TEST(PolicyLossGspo, GradientFlowsPerTokenThroughTheSequenceRatio) {
  // Same rows as above. Token t's ratio is sg[s_b] * exp(lp_t - sg[lp_t]), so
  // d loss / d lp_t = (1 / B) (1 / n_b) (-A_t) s_b where the token is unclipped, 0 where clipped:
  //   row 0: -sqrt(1.1) / 6 * [1, 2] = [-0.174801, -0.349603]
  //   row 1: clipped -> [0, 0]; row 2: (1 / 3) * 0.9 = 0.3, masked token 0.
  // (Finite differences do not apply: the stop-gradients make the gradient differ from the
  // derivative of the loss's value by design.)
  at::Tensor log_prob =
      Doubles({std::log(1.1), 0, std::log(2.0), 0, std::log(0.9), 5}, {3, 2}).requires_grad_(true);
  const at::Tensor advantages = Doubles({1, 2, 1, 1, -1, -1}, {3, 2});
  const at::Tensor mask = Doubles({1, 1, 1, 1, 1, 0}, {3, 2});
  ComputePolicyLoss(at::zeros({3, 2}, at::kDouble), log_prob, advantages, mask, Options("gspo"))
      .value()
      .loss.backward();
  const double g = -std::sqrt(1.1) / 6;
  const at::Tensor expected = Doubles({g, 2 * g, 0, 0, 0.3, 0}, {3, 2});
  EXPECT_TRUE(at::allclose(log_prob.grad(), expected, 1e-7, 1e-9)) << log_prob.grad();
}

TEST(PolicyLoss, MaskedTokensChangeNothing) {
  at::manual_seed(4);
  const at::Tensor old_log_prob = at::randn({3, 5}, at::kDouble);
  const at::Tensor delta = at::rand({3, 5}, at::kDouble) - 0.5;
  const at::Tensor advantages = at::randn({3, 5}, at::kDouble);
  const at::Tensor mask = Doubles({1, 1, 1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0}, {3, 5});
  const at::Tensor garbage = at::randn({3, 5}, at::kDouble) * 30 * (1 - mask);
  for (const std::string& loss_mode : kLossModes) {
    for (const std::string& agg_mode : kAggModes) {
      PolicyLossOptions options = Options(loss_mode);
      options.loss_agg_mode = agg_mode;
      at::Tensor clean_lp = (old_log_prob + delta).requires_grad_(true);
      at::Tensor dirty_lp = (old_log_prob + delta + garbage).requires_grad_(true);
      PolicyLossResult clean =
          ComputePolicyLoss(old_log_prob, clean_lp, advantages, mask, options).value();
      PolicyLossResult dirty =
          ComputePolicyLoss(old_log_prob - garbage, dirty_lp, advantages + garbage, mask, options)
              .value();
      clean.loss.backward();
      dirty.loss.backward();
      const std::string where = std::string(loss_mode) + " / " + agg_mode;
      EXPECT_NEAR(clean.loss.item<double>(), dirty.loss.item<double>(), 1e-12) << where;
      EXPECT_NEAR(clean.pg_clipfrac.item<double>(), dirty.pg_clipfrac.item<double>(), 1e-12) << where;
      EXPECT_NEAR(clean.pg_clipfrac_lower.item<double>(), dirty.pg_clipfrac_lower.item<double>(), 1e-12) << where;
      EXPECT_NEAR(clean.ppo_kl.item<double>(), dirty.ppo_kl.item<double>(), 1e-12) << where;
      EXPECT_TRUE(at::allclose(clean_lp.grad(), dirty_lp.grad(), 0, 1e-12)) << where;
      EXPECT_TRUE(at::equal(dirty_lp.grad() * (1 - mask), at::zeros_like(mask))) << where;
    }
  }
}

TEST(PolicyLoss, AllMaskedBatchGivesZeroLossAndMetrics) {
  const at::Tensor log_prob = at::randn({2, 3}, at::kDouble);
  for (const std::string& loss_mode : kLossModes) {
    PolicyLossResult result =
        ComputePolicyLoss(log_prob * 0.5, log_prob, at::ones({2, 3}, at::kDouble),
                          at::zeros({2, 3}), Options(loss_mode))
            .value();
    EXPECT_EQ(result.loss.item<double>(), 0.0) << loss_mode;
    EXPECT_EQ(result.pg_clipfrac.item<double>(), 0.0) << loss_mode;
    EXPECT_EQ(result.ppo_kl.item<double>(), 0.0) << loss_mode;
  }
}

TEST(PolicyLoss, LossFollowsTheInputDtype) {
  const at::Tensor log_prob = at::randn({2, 3});
  PolicyLossResult result = ComputePolicyLoss(log_prob, log_prob, at::ones({2, 3}),
                                              at::ones({2, 3}, at::kBool), Options())
                                .value();
  EXPECT_EQ(result.loss.scalar_type(), at::kFloat);
  EXPECT_EQ(result.loss.dim(), 0);
}

TEST(PolicyLoss, UnknownLossModeListsTheValidOnes) {
  const at::Tensor x = at::zeros({1, 2});
  absl::StatusOr<PolicyLossResult> result = ComputePolicyLoss(x, x, x, x, Options("ppo"));
  ASSERT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      result.status().message(),
      "policy loss: loss_mode: unknown policy loss mode \"ppo\"; valid modes are vanilla, gspo, sapo, dppo_tv, "
      "dppo_kl, kl_cov, clip_cov, geo_mean, cispo, gpg");
}

TEST(PolicyLoss, RejectsBadOptionsAndInputsNamingThem) {
  const at::Tensor x = at::zeros({2, 3});
  const at::Tensor mask = at::ones({2, 3});
  struct Case {
    std::function<void(PolicyLossOptions&)> set;
    at::Tensor log_prob;
    at::Tensor advantages;
    std::string expected;
  };
  const at::Tensor nan_log_prob = at::tensor({0.0f, 0.0f, 0.0f, 0.0f, 0.0f, NAN}).reshape({2, 3});
  const std::vector<Case> cases = {
      {[](PolicyLossOptions& o) { o.clip_ratio_c = 1.0; }, x, x, "clip_ratio_c: the dual-clip"},
      {[](PolicyLossOptions& o) { o.clip_ratio_high = -0.1; }, x, x,
       "clip_ratio_high: must be >= 0"},
      {[](PolicyLossOptions& o) { o.clip_ratio = NAN; }, x, x, "clip_ratio: must be >= 0"},
      {[](PolicyLossOptions& o) { o.loss_mode = "kl_cov", o.kl_cov_ratio = 0; }, x, x,
       "kl_cov_ratio: the fraction of tokens penalised must be in (0, 1]"},
      {[](PolicyLossOptions& o) { o.loss_mode = "kl_cov", o.ppo_kl_coef = -1; }, x, x,
       "ppo_kl_coef: must be >= 0"},
      {[](PolicyLossOptions& o) { o.loss_mode = "sapo", o.tau_neg = 0; }, x, x,
       "tau_pos and tau_neg: the gate's temperatures must be > 0; got 1 and 0"},
      {[](PolicyLossOptions& o) { o.loss_mode = "clip_cov", o.clip_cov_ratio = 1.5; }, x, x,
       "clip_cov_ratio: the fraction of tokens detached must be in (0, 1]"},
      {[](PolicyLossOptions& o) { o.loss_mode = "clip_cov", o.clip_cov_lb = 5; }, x, x,
       "clip_cov_lb (5) must be below clip_cov_ub (5)"},
      {[](PolicyLossOptions& o) { o.loss_agg_mode = "sum"; }, x, x, "unknown mode \"sum\""},
      {[](PolicyLossOptions&) {}, nan_log_prob, x,
       "log_prob: 1 NaN and 0 infinite values (first at [1, 2])"},
      {[](PolicyLossOptions&) {}, x, at::zeros({2, 4}),
       "advantages: shape [2, 4] does not match response_mask [2, 3]"},
      {[](PolicyLossOptions&) {}, x, at::zeros({2, 3}, at::kLong),
       "advantages: expected a floating dtype"},
  };
  for (const Case& c : cases) {
    PolicyLossOptions options = Options();
    c.set(options);
    absl::StatusOr<PolicyLossResult> result =
        ComputePolicyLoss(x, c.log_prob, c.advantages, mask, options);
    ASSERT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << c.expected;
    EXPECT_NE(result.status().message().find(c.expected), std::string::npos) << result.status();
    EXPECT_EQ(result.status().message().rfind("policy loss", 0), 0u) << result.status();
  }
}

}  // namespace
}  // namespace rollout::algorithms