#include "algorithms/kl.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "tests/support/numeric_gradient.h"

namespace rollout::algorithms {
namespace {

using ::rollout::testing::NumericGradient;

using ::testing::HasSubstr;

at::Tensor Row(std::vector<double> values) {
  return at::tensor(values, at::kDouble).reshape({1, static_cast<int64_t>(values.size())});
}

double At(const at::Tensor& t, int64_t i, int64_t j) { return t[i][j].item<double>(); }

// Autograd gradient of sum(f(logprob, ref) * weights) against central finite
// differences for both inputs; float64 throughout.
void ExpectGradientMatchesFiniteDifferences(const std::string& name, const at::Tensor& logprob,
                                            const at::Tensor& ref) {
  SCOPED_TRACE(name);
  auto objective = [&](const at::Tensor& lp, const at::Tensor& rf) {
    const at::Tensor kl = KlPenalty(lp, rf, name).value().reshape(-1);
    return (kl * at::linspace(0.5, 1.5, kl.numel(), at::kDouble)).sum();
  };
  at::Tensor lp = logprob.clone().requires_grad_(true);
  at::Tensor rf = ref.clone().requires_grad_(true);
  objective(lp, rf).backward();
  const at::Tensor numeric_lp = NumericGradient(
      [&](const at::Tensor& x) { return objective(x, ref).item<double>(); }, logprob);
  const at::Tensor numeric_rf = NumericGradient(
      [&](const at::Tensor& x) { return objective(logprob, x).item<double>(); }, ref);
  EXPECT_TRUE(at::allclose(lp.grad(), numeric_lp, 1e-6, 1e-6))
      << "logprob: max diff " << (lp.grad() - numeric_lp).abs().max().item<double>();
  EXPECT_TRUE(at::allclose(rf.grad(), numeric_rf, 1e-6, 1e-6))
      << "ref: max diff " << (rf.grad() - numeric_rf).abs().max().item<double>();
}

// ---- Estimators --------------------------------------------------------------------

TEST(KlPenalty, HandComputedEstimators) {
  // d = logprob - ref = [0.5, -1.0].
  const at::Tensor logprob = Row({-1.0, -2.0});
  const at::Tensor ref = Row({-1.5, -1.0});
  for (const char* name : {"kl", "k1"}) {
    at::Tensor kl = KlPenalty(logprob, ref, name).value();
    EXPECT_DOUBLE_EQ(At(kl, 0, 0), 0.5) << name;
    EXPECT_DOUBLE_EQ(At(kl, 0, 1), -1.0) << name;
  }
  at::Tensor abs = KlPenalty(logprob, ref, "abs").value();
  EXPECT_DOUBLE_EQ(At(abs, 0, 0), 0.5);
  EXPECT_DOUBLE_EQ(At(abs, 0, 1), 1.0);
  for (const char* name : {"mse", "k2"}) {
    // 0.5 * 0.25 = 0.125; 0.5 * 1 = 0.5.
    at::Tensor kl = KlPenalty(logprob, ref, name).value();
    EXPECT_DOUBLE_EQ(At(kl, 0, 0), 0.125) << name;
    EXPECT_DOUBLE_EQ(At(kl, 0, 1), 0.5) << name;
  }
  for (const char* name : {"low_var_kl", "k3"}) {
    // c = ref - logprob = [-0.5, 1]: e^-0.5 + 0.5 - 1 = 0.10653065971263342 and
    // e - 1 - 1 = 0.7182818284590451 (python3 math.exp).
    at::Tensor kl = KlPenalty(logprob, ref, name).value();
    EXPECT_NEAR(At(kl, 0, 0), 0.10653065971263342, 1e-15) << name;
    EXPECT_NEAR(At(kl, 0, 1), 0.7182818284590451, 1e-15) << name;
  }
}

TEST(KlPenalty, LowVarKlIsClampedToTenWithNoGradient) {
  // c = +-30: e^20 - 21 (inner clamp to 20) and e^-20 + 19 both exceed 10.
  at::Tensor logprob = Row({-30.0, 0.0}).requires_grad_(true);
  at::Tensor kl = KlPenalty(logprob, Row({0.0, -30.0}), "low_var_kl").value();
  EXPECT_DOUBLE_EQ(At(kl, 0, 0), 10.0);
  EXPECT_DOUBLE_EQ(At(kl, 0, 1), 10.0);
  kl.sum().backward();
  EXPECT_TRUE(at::equal(logprob.grad(), at::zeros_like(logprob)));
}

TEST(KlPenalty, FullSumsOverTheVocabulary) {
  // p = softmax([0, ln 2, ln 3]) = [1, 2, 3] / 6 against the uniform q = 1/3:
  // KL = 1/6 ln(1/2) + 1/3 ln 1 + 1/2 ln(3/2) = 0.08720802396075798 (python3 math).
  const at::Tensor logits =
      at::tensor({0.0, std::log(2.0), std::log(3.0)}, at::kDouble).reshape({1, 1, 3});
  at::Tensor kl = KlPenalty(logits, at::zeros({1, 1, 3}, at::kDouble), "full").value();
  ASSERT_EQ(kl.sizes(), (std::vector<int64_t>{1, 1}));
  EXPECT_NEAR(At(kl, 0, 0), 0.08720802396075798, 1e-15);
  // Log-probs give the same value as the logits they come from.
  at::Tensor from_log_probs =
      KlPenalty(logits.log_softmax(-1), at::zeros({1, 1, 3}, at::kDouble), "full").value();
  EXPECT_NEAR(At(from_log_probs, 0, 0), 0.08720802396075798, 1e-15);
}

TEST(KlPenalty, SampledEstimatorsAverageToTheFullKlUnderThePolicy) {
  // E_{v~p}[k1] = E_{v~p}[k3] = KL(p || q) exactly, since E_p[q/p - 1] = 0. Logits in
  // [-0.5, 0.5) keep |log q/p| < 2, so k3 <= e^2 - 3 stays below its clamp at 10.
  at::manual_seed(1);
  const at::Tensor log_p = (at::rand({2, 3, 7}, at::kDouble) - 0.5).log_softmax(-1);
  const at::Tensor log_q = (at::rand({2, 3, 7}, at::kDouble) - 0.5).log_softmax(-1);
  const at::Tensor full = KlPenalty(log_p, log_q, "full").value();
  for (const char* name : {"k1", "k3"}) {
    const at::Tensor per_token = KlPenalty(log_p, log_q, name).value();
    EXPECT_TRUE(at::allclose((log_p.exp() * per_token).sum(-1), full, 1e-12, 1e-12)) << name;
  }
}

TEST(KlPenalty, IdenticalDistributionsGiveZeroAndEstimatorsAreNonNegative) {
  at::manual_seed(2);
  const at::Tensor logprob = -at::rand({4, 5}, at::kDouble) * 3;
  const at::Tensor ref = -at::rand({4, 5}, at::kDouble) * 3;
  for (const std::string& name : KlPenaltyNames()) {
    if (name == "full") continue;
    EXPECT_TRUE(at::equal(KlPenalty(logprob, logprob, name).value(), at::zeros_like(logprob)))
        << name;
  }
  for (const char* name : {"abs", "k2", "k3", "abs+", "k3+"}) {
    EXPECT_GE(KlPenalty(logprob, ref, name).value().min().item<double>(), 0.0) << name;
  }
}

TEST(KlPenalty, KeepsDtypeAndShape) {
  const at::Tensor logprob = -at::rand({3, 4});
  at::Tensor kl = KlPenalty(logprob, logprob * 2, "low_var_kl").value();
  EXPECT_EQ(kl.scalar_type(), at::kFloat);
  EXPECT_EQ(kl.sizes(), logprob.sizes());
}

TEST(KlPenalty, GradientsMatchFiniteDifferences) {
  // Values kept away from abs's kink at 0 and from k3's clamps.
  at::manual_seed(3);
  const at::Tensor logprob = -at::rand({2, 3}, at::kDouble) * 2 - 0.1;
  const at::Tensor ref =
      logprob + at::tensor({0.3, -0.4, 0.7, -1.1, 0.5, -0.2}, at::kDouble).reshape({2, 3});
  for (const char* name : {"kl", "abs", "mse", "low_var_kl"}) {
    ExpectGradientMatchesFiniteDifferences(name, logprob, ref);
  }
  ExpectGradientMatchesFiniteDifferences("full", at::randn({2, 2, 5}, at::kDouble),
                                         at::randn({2, 2, 5}, at::kDouble));
}

TEST(KlPenalty, PlusVariantsHaveTheNamedValueAndTheGradientOfK2) {
  at::manual_seed(4);
  const at::Tensor logprob = -at::rand({3, 4}, at::kDouble) * 2;
  const at::Tensor ref = -at::rand({3, 4}, at::kDouble) * 2;
  for (const char* base : {"kl", "k1", "abs", "mse", "k2", "low_var_kl", "k3"}) {
    SCOPED_TRACE(base);
    at::Tensor lp = logprob.clone().requires_grad_(true);
    at::Tensor rf = ref.clone().requires_grad_(true);
    at::Tensor plus = KlPenalty(lp, rf, std::string(base) + "+").value();
    EXPECT_TRUE(at::equal(plus, KlPenalty(logprob, ref, base).value()));
    plus.sum().backward();
    // d/dlogprob of 0.5 (logprob - ref)^2 is (logprob - ref); d/dref its negative.
    EXPECT_TRUE(at::allclose(lp.grad(), logprob - ref, 1e-14, 1e-14));
    EXPECT_TRUE(at::allclose(rf.grad(), ref - logprob, 1e-14, 1e-14));
  }
}

TEST(KlPenalty, AcceptsEveryNameTheRecipeSchemaAllows) {
  // The (choices) of actor.kl_loss_type and algorithm.kl_penalty in proto/recipe.proto.
  const std::string choices =
      "kl|k1|abs|mse|k2|low_var_kl|k3|kl+|k1+|abs+|mse+|k2+|low_var_kl+|k3+|full";
  for (absl::string_view name : absl::StrSplit(choices, '|')) {
    const bool full = name == "full";
    const at::Tensor lp = full ? at::randn({1, 2, 3}) : at::randn({1, 2});
    EXPECT_TRUE(KlPenalty(lp, lp, std::string(name)).ok()) << name;
  }
}

TEST(KlPenalty, UnknownNameListsTheValidOnes) {
  for (const char* name : {"k4", "full+", "", "+", "KL"}) {
    absl::StatusOr<at::Tensor> kl = KlPenalty(Row({0.0}), Row({0.0}), name);
    ASSERT_FALSE(kl.ok()) << name;
    EXPECT_EQ(kl.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(kl.status().message()), HasSubstr("low_var_kl+"));
    EXPECT_THAT(std::string(kl.status().message()), HasSubstr(std::string("'") + name + "'"));
  }
}

TEST(KlPenalty, RejectsMismatchedOrNonFloatingInputs) {
  const at::Tensor lp = at::zeros({2, 3});
  EXPECT_FALSE(KlPenalty(lp, at::zeros({2, 4}), "kl").ok());
  EXPECT_FALSE(KlPenalty(lp, at::zeros({2, 3}, at::kDouble), "kl").ok());
  EXPECT_FALSE(KlPenalty(at::zeros({2, 3}, at::kLong), at::zeros({2, 3}, at::kLong), "kl").ok());
  absl::StatusOr<at::Tensor> full = KlPenalty(lp, lp, "full");
  ASSERT_FALSE(full.ok());
  EXPECT_THAT(std::string(full.status().message()), HasSubstr("[B, T, V]"));
}

TEST(KlPenalty, ReportsNonFiniteInputs) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  absl::StatusOr<at::Tensor> with_nan = KlPenalty(Row({0.0, nan}), Row({0.0, 0.0}), "k3");
  ASSERT_FALSE(with_nan.ok());
  EXPECT_THAT(std::string(with_nan.status().message()), HasSubstr("logprob: 1 NaN"));
  absl::StatusOr<at::Tensor> with_inf = KlPenalty(Row({0.0, 0.0}), Row({-inf, 0.0}), "kl");
  ASSERT_FALSE(with_inf.ok());
  EXPECT_THAT(std::string(with_inf.status().message()), HasSubstr("ref_logprob: 0 NaN and 1"));
}

// ---- KL loss -----------------------------------------------------------------------

TEST(KlLoss, MaskedMeanOverResponseTokensByDefault) {
  // k1 = [[1, 2], [3, 100]] with the 100 masked: (1 + 2 + 3) / 3 = 2.
  at::Tensor logprob =
      at::tensor({1.0, 2.0, 3.0, 100.0}, at::kDouble).reshape({2, 2}).requires_grad_(true);
  const at::Tensor mask = at::tensor({1, 1, 1, 0}, at::kLong).reshape({2, 2});
  at::Tensor loss = KlLoss(logprob, at::zeros({2, 2}, at::kDouble), mask, "kl").value();
  EXPECT_NEAR(loss.item<double>(), 2.0, 1e-8);
  loss.backward();
  EXPECT_DOUBLE_EQ(At(logprob.grad(), 1, 1), 0.0);
  EXPECT_NEAR(At(logprob.grad(), 0, 0), 1.0 / 3, 1e-8);
}

TEST(KlLoss, MaskedTokensChangeNothing) {
  at::manual_seed(5);
  const at::Tensor logprob = -at::rand({3, 4}, at::kDouble);
  const at::Tensor ref = -at::rand({3, 4}, at::kDouble);
  const at::Tensor mask = at::rand({3, 4}) > 0.4;
  const at::Tensor changed = at::where(mask, logprob, logprob - 5);
  EXPECT_DOUBLE_EQ(KlLoss(logprob, ref, mask, "low_var_kl").value().item<double>(),
                   KlLoss(changed, ref, mask, "low_var_kl").value().item<double>());
}

TEST(KlLoss, UsesTheCallersAggregator) {
  const at::Tensor mask = at::tensor({1, 0}, at::kLong).reshape({1, 2});
  TokenLossAggregator token_sum = [&](const at::Tensor& loss_mat, const at::Tensor& m) {
    EXPECT_TRUE(at::equal(m, mask));
    return absl::StatusOr<at::Tensor>((loss_mat * m).sum());
  };
  // k2 = 0.5 * [1, 4] masked to [0.5, 0]: sum 0.5.
  at::Tensor loss = KlLoss(Row({1.0, 2.0}), Row({0.0, 0.0}), mask, "k2", token_sum).value();
  EXPECT_DOUBLE_EQ(loss.item<double>(), 0.5);
  TokenLossAggregator failing = [](const at::Tensor&, const at::Tensor&) {
    return absl::StatusOr<at::Tensor>(absl::InvalidArgumentError("bad mode"));
  };
  EXPECT_FALSE(KlLoss(Row({1.0, 2.0}), Row({0.0, 0.0}), mask, "k2", failing).ok());
}

TEST(KlLoss, RejectsABadMask) {
  const at::Tensor lp = at::zeros({2, 3});
  EXPECT_FALSE(KlLoss(lp, lp, at::ones({3, 2}), "kl").ok());
  at::Tensor nan_mask = at::ones({2, 3});
  nan_mask[0][0] = std::numeric_limits<float>::quiet_NaN();
  absl::StatusOr<at::Tensor> loss = KlLoss(lp, lp, nan_mask, "kl");
  ASSERT_FALSE(loss.ok());
  EXPECT_THAT(std::string(loss.status().message()), HasSubstr("response_mask"));
}

// ---- KL in reward ------------------------------------------------------------------

// Coefficient 0.5 steering towards KL 0.1 over a horizon of 20 steps.
const KlControlOptions kAdaptive =
    KlControlOptions().set_type("adaptive").set_kl_coef(0.5).set_target_kl(0.1).set_horizon(20);

struct RewardBatch {
  // old - ref = d = [[0.5, -0.5, 0], [-1, 0, 3]]; the 3 is masked.
  at::Tensor scores = at::tensor({0.0, 0.0, 1.0, 0.0, 2.0, 0.0}, at::kDouble).reshape({2, 3});
  at::Tensor old_log_prob =
      at::tensor({-1.0, -1.0, -1.0, -2.0, -2.0, -2.0}, at::kDouble).reshape({2, 3});
  at::Tensor ref_log_prob =
      at::tensor({-1.5, -0.5, -1.0, -1.0, -2.0, -5.0}, at::kDouble).reshape({2, 3});
  at::Tensor mask = at::tensor({1, 1, 1, 1, 1, 0}, at::kLong).reshape({2, 3});
};

TEST(ApplyKlPenalty, HandComputedRewardsAndMetrics) {
  RewardBatch b;
  std::unique_ptr<KlController> fixed =
      MakeKlController(KlControlOptions().set_kl_coef(0.5)).value();
  KlInRewardResult r =
      ApplyKlPenalty(b.scores, b.old_log_prob, b.ref_log_prob, b.mask, "kl", *fixed).value();
  // kld = [[0.5, -0.5, 0], [-1, 0, 0]]; rewards = scores - 0.5 * kld.
  const at::Tensor expected =
      at::tensor({-0.25, 0.25, 1.0, 0.5, 2.0, 0.0}, at::kDouble).reshape({2, 3});
  EXPECT_TRUE(at::allclose(r.token_level_rewards, expected, 0, 1e-15));
  // Per row: (0.5 - 0.5 + 0) / 3 = 0 and (-1 + 0) / 2 = -0.5; mean -0.25.
  EXPECT_NEAR(r.current_kl, -0.25, 1e-8);
  EXPECT_DOUBLE_EQ(r.kl_coef, 0.5);
  const std::map<std::string, double> metrics = r.Metrics();
  EXPECT_NEAR(metrics.at("actor/reward_kl_penalty"), -0.25, 1e-8);
  EXPECT_DOUBLE_EQ(metrics.at("actor/reward_kl_penalty_coeff"), 0.5);
}

TEST(ApplyKlPenalty, UpdatesTheControllerWithTheBatchSize) {
  RewardBatch b;
  std::unique_ptr<KlController> ctrl = MakeKlController(kAdaptive).value();
  KlInRewardResult r =
      ApplyKlPenalty(b.scores, b.old_log_prob, b.ref_log_prob, b.mask, "kl", *ctrl).value();
  // The coefficient applied is the one before the update.
  EXPECT_DOUBLE_EQ(r.kl_coef, 0.5);
  // -0.25 / 0.1 - 1 clipped to -0.2; n_steps = B = 2: 0.5 * (1 - 0.2 * 2 / 20) = 0.49.
  EXPECT_NEAR(ctrl->value(), 0.49, 1e-12);
}

TEST(ApplyKlPenalty, AllMaskedRowCountsAsZeroKl) {
  RewardBatch b;
  b.mask[1].zero_();
  std::unique_ptr<KlController> fixed = MakeKlController(KlControlOptions()).value();
  KlInRewardResult r =
      ApplyKlPenalty(b.scores, b.old_log_prob, b.ref_log_prob, b.mask, "k2", *fixed).value();
  // Row 0: k2 = [0.125, 0.125, 0] -> mean 1/12; row 1 contributes 0: (1/12 + 0) / 2.
  EXPECT_NEAR(r.current_kl, 1.0 / 24, 1e-8);
  EXPECT_TRUE(at::equal(r.token_level_rewards[1], b.scores[1]));
}

TEST(ApplyKlPenalty, RewardsCarryNoGradient) {
  RewardBatch b;
  b.old_log_prob.requires_grad_(true);
  std::unique_ptr<KlController> fixed = MakeKlController(KlControlOptions()).value();
  KlInRewardResult r =
      ApplyKlPenalty(b.scores, b.old_log_prob, b.ref_log_prob, b.mask, "low_var_kl", *fixed)
          .value();
  EXPECT_FALSE(r.token_level_rewards.requires_grad());
}

TEST(ApplyKlPenalty, RejectsBadInputsAndLeavesTheControllerUnchanged) {
  std::unique_ptr<KlController> ctrl = MakeKlController(kAdaptive).value();
  RewardBatch b;
  absl::StatusOr<KlInRewardResult> full =
      ApplyKlPenalty(b.scores, b.old_log_prob, b.ref_log_prob, b.mask, "full", *ctrl);
  ASSERT_FALSE(full.ok());
  EXPECT_THAT(std::string(full.status().message()), HasSubstr("[B, T, V]"));
  EXPECT_FALSE(ApplyKlPenalty(b.scores, b.old_log_prob, b.ref_log_prob, b.mask, "k9", *ctrl).ok());
  EXPECT_FALSE(
      ApplyKlPenalty(b.scores, b.old_log_prob, b.ref_log_prob, b.mask.slice(1, 0, 2), "kl", *ctrl)
          .ok());
  EXPECT_FALSE(
      ApplyKlPenalty(b.scores.slice(1, 0, 2), b.old_log_prob, b.ref_log_prob, b.mask, "kl", *ctrl)
          .ok());
  const at::Tensor empty = at::zeros({0, 3}, at::kDouble);
  EXPECT_FALSE(ApplyKlPenalty(empty, empty, empty, at::zeros({0, 3}), "kl", *ctrl).ok());
  b.scores[0][1] = std::nan("");
  absl::StatusOr<KlInRewardResult> nan =
      ApplyKlPenalty(b.scores, b.old_log_prob, b.ref_log_prob, b.mask, "kl", *ctrl);
  ASSERT_FALSE(nan.ok());
  EXPECT_THAT(std::string(nan.status().message()), HasSubstr("token_level_scores: 1 NaN"));
  EXPECT_DOUBLE_EQ(ctrl->value(), 0.5);
}

}  // namespace
}  // namespace rollout::algorithms
