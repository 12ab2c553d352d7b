#include "algorithms/dpo_loss.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "tests/support/numeric_gradient.h"

namespace rollout::algorithms {
namespace {

using ::rollout::testing::NumericGradient;

using ::testing::HasSubstr;

at::Tensor Vec(std::vector<double> values) { return at::tensor(values, at::kDouble); }

// Two pairs. Pair 1: chosen log-ratio 1, rejected -1, margin logits 2.
// Pair 2: chosen log-ratio 0, rejected 1, margin logits -1.
struct Pairs {
  at::Tensor policy_chosen = Vec({-1.0, -2.0});
  at::Tensor policy_rejected = Vec({-3.0, -1.0});
  at::Tensor reference_chosen = Vec({-2.0, -2.0});
  at::Tensor reference_rejected = Vec({-2.0, -2.0});
};

absl::StatusOr<DpoLossResult> RunDpo(const Pairs& p, const DpoLossOptions& options) {
  return DpoLoss(p.policy_chosen, p.policy_rejected, p.reference_chosen, p.reference_rejected,
                 options);
}

TEST(DpoLoss, HandComputedLossesPerType) {
  Pairs p;
  // beta = 0.5: beta * logits = [1, -0.5]; softplus(x) = -log_sigmoid(-x) (python3 math):
  //   sigmoid: (softplus(-1) + softplus(0.5)) / 2 = (0.31326168751822286 +
  //            0.9740769841801067) / 2 = 0.6436693358491647
  //   ls 0.1:  (0.9 softplus(-1) + 0.1 softplus(1) + 0.9 softplus(0.5) + 0.1 softplus(-0.5))
  //            / 2 = 0.6686693358491649
  //   ipo:     1 / (2 beta) = 1: ((2 - 1)^2 + (-1 - 1)^2) / 2 = 2.5
  //   hinge:   (relu(1 - 1) + relu(1 + 0.5)) / 2 = 0.75
  const DpoLossOptions base = DpoLossOptions().set_beta(0.5);
  EXPECT_NEAR(RunDpo(p, base).value().loss.item<double>(), 0.6436693358491647, 1e-15);
  EXPECT_NEAR(RunDpo(p, DpoLossOptions(base).set_label_smoothing(0.1)).value().loss.item<double>(),
              0.6686693358491649, 1e-15);
  EXPECT_DOUBLE_EQ(RunDpo(p, DpoLossOptions(base).set_loss_type("ipo")).value().loss.item<double>(),
                   2.5);
  EXPECT_DOUBLE_EQ(
      RunDpo(p, DpoLossOptions(base).set_loss_type("hinge")).value().loss.item<double>(), 0.75);
}

TEST(DpoLoss, ImplicitRewardsAccuracyAndMargin) {
  Pairs p;
  DpoLossResult r = RunDpo(p, DpoLossOptions().set_beta(0.5)).value();
  // chosen = 0.5 * [1, 0], rejected = 0.5 * [-1, 1]; pair 1 is ranked right, pair 2
  // wrong; margins [1, -0.5] average 0.25.
  EXPECT_TRUE(at::equal(r.chosen_rewards, Vec({0.5, 0.0})));
  EXPECT_TRUE(at::equal(r.rejected_rewards, Vec({-0.5, 0.5})));
  EXPECT_DOUBLE_EQ(r.reward_accuracy.item<double>(), 0.5);
  EXPECT_DOUBLE_EQ(r.reward_margin.item<double>(), 0.25);
  const std::map<std::string, at::Tensor> metrics = r.Metrics();
  EXPECT_DOUBLE_EQ(metrics.at("rewards/chosen").item<double>(), 0.25);
  EXPECT_DOUBLE_EQ(metrics.at("rewards/rejected").item<double>(), 0.0);
  EXPECT_DOUBLE_EQ(metrics.at("rewards/accuracies").item<double>(), 0.5);
  EXPECT_DOUBLE_EQ(metrics.at("rewards/margins").item<double>(), 0.25);
}

TEST(DpoLoss, TiedRewardsCountAsWrong) {
  const at::Tensor same = Vec({-1.0, -2.0});
  DpoLossResult r = DpoLoss(same, same, same, same).value();
  EXPECT_DOUBLE_EQ(r.reward_accuracy.item<double>(), 0.0);
  EXPECT_DOUBLE_EQ(r.reward_margin.item<double>(), 0.0);
}

TEST(DpoLoss, PolicyEqualToReferenceGivesEachTypesStartingLoss) {
  // logits = 0: sigmoid -log(1/2) = ln 2; ipo (1 / (2 * 0.1))^2 = 25; hinge relu(1) = 1.
  const at::Tensor logps = Vec({-4.0, -7.0, -1.5});
  auto loss = [&](const char* type) {
    return DpoLoss(logps, logps * 2, logps, logps * 2, DpoLossOptions().set_loss_type(type))
        .value()
        .loss.item<double>();
  };
  EXPECT_NEAR(loss("sigmoid"), std::log(2.0), 1e-15);
  EXPECT_NEAR(loss("ipo"), 25.0, 1e-12);
  EXPECT_DOUBLE_EQ(loss("hinge"), 1.0);
}

TEST(DpoLoss, HalfLabelSmoothingIsIndifferentToWhichResponseIsChosen) {
  Pairs p;
  const DpoLossOptions options = DpoLossOptions().set_label_smoothing(0.5);
  const double forward = RunDpo(p, options).value().loss.item<double>();
  const double swapped =
      DpoLoss(p.policy_rejected, p.policy_chosen, p.reference_rejected, p.reference_chosen, options)
          .value()
          .loss.item<double>();
  EXPECT_NEAR(forward, swapped, 1e-15);
  // Without smoothing the swap matters.
  EXPECT_GT(DpoLoss(p.policy_rejected, p.policy_chosen, p.reference_rejected, p.reference_chosen)
                .value()
                .loss.item<double>(),
            RunDpo(p, DpoLossOptions()).value().loss.item<double>());
}

TEST(DpoLoss, SigmoidIsStableForHugeMargins) {
  // beta * logits = +-100: the loss is ~0 and exactly 100, never inf or NaN.
  const at::Tensor zero = Vec({0.0});
  const DpoLossOptions options = DpoLossOptions().set_beta(0.1);
  const double right =
      DpoLoss(Vec({1000.0}), zero, zero, zero, options).value().loss.item<double>();
  const double wrong =
      DpoLoss(zero, Vec({1000.0}), zero, zero, options).value().loss.item<double>();
  EXPECT_NEAR(right, 0.0, 1e-40);
  EXPECT_NEAR(wrong, 100.0, 1e-12);
}

TEST(DpoLoss, RewardsAreDetachedAndTheLossIsNot) {
  Pairs p;
  p.policy_chosen.requires_grad_(true);
  DpoLossResult r = RunDpo(p, DpoLossOptions()).value();
  EXPECT_TRUE(r.loss.requires_grad());
  EXPECT_FALSE(r.chosen_rewards.requires_grad());
  EXPECT_FALSE(r.rejected_rewards.requires_grad());
}

// Autograd gradients of the loss against central finite differences for all four inputs,
// float64. |logits| <= 20, so beta * logits stays clear of hinge's kink at 1.
TEST(DpoLoss, GradientsMatchFiniteDifferences) {
  at::manual_seed(7);
  const std::array<at::Tensor, 4> inputs = {
      -at::rand({4}, at::kDouble) * 10, -at::rand({4}, at::kDouble) * 10,
      -at::rand({4}, at::kDouble) * 10, -at::rand({4}, at::kDouble) * 10};
  const std::vector<DpoLossOptions> cases = {
      DpoLossOptions(), DpoLossOptions().set_beta(0.3).set_label_smoothing(0.2),
      DpoLossOptions().set_loss_type("ipo").set_beta(0.5),
      DpoLossOptions().set_loss_type("hinge").set_beta(0.05)};
  for (const DpoLossOptions& options : cases) {
    SCOPED_TRACE(options.loss_type + " ls " + std::to_string(options.label_smoothing));
    auto loss = [&](const std::array<at::Tensor, 4>& x) {
      return DpoLoss(x[0], x[1], x[2], x[3], options).value().loss;
    };
    std::array<at::Tensor, 4> leaves;
    for (int k = 0; k < 4; ++k) leaves[k] = inputs[k].clone().requires_grad_(true);
    loss(leaves).backward();
    for (int k = 0; k < 4; ++k) {
      const at::Tensor numeric = NumericGradient(
          [&](const at::Tensor& x) {
            std::array<at::Tensor, 4> shifted = inputs;
            shifted[k] = x;
            return loss(shifted).item<double>();
          },
          inputs[k]);
      EXPECT_TRUE(at::allclose(leaves[k].grad(), numeric, 1e-6, 1e-6))
          << "input " << k << ": max diff "
          << (leaves[k].grad() - numeric).abs().max().item<double>();
    }
  }
}

TEST(DpoLoss, UnknownLossTypeListsTheValidOnes) {
  absl::StatusOr<DpoLossResult> r = RunDpo(Pairs(), DpoLossOptions().set_loss_type("kto"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("'kto'"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("sigmoid, ipo, hinge"));
}

TEST(DpoLoss, RejectsBadOptions) {
  Pairs p;
  EXPECT_FALSE(RunDpo(p, DpoLossOptions().set_beta(0)).ok());
  EXPECT_FALSE(RunDpo(p, DpoLossOptions().set_beta(-0.1)).ok());
  EXPECT_FALSE(RunDpo(p, DpoLossOptions().set_beta(std::nan(""))).ok());
  EXPECT_FALSE(RunDpo(p, DpoLossOptions().set_label_smoothing(0.6)).ok());
  EXPECT_FALSE(RunDpo(p, DpoLossOptions().set_label_smoothing(-0.1)).ok());
  EXPECT_FALSE(RunDpo(p, DpoLossOptions().set_label_smoothing(std::nan(""))).ok());
  EXPECT_TRUE(RunDpo(p, DpoLossOptions().set_label_smoothing(0.5)).ok());
  absl::StatusOr<DpoLossResult> ipo =
      RunDpo(p, DpoLossOptions().set_loss_type("ipo").set_label_smoothing(0.1));
  ASSERT_FALSE(ipo.ok());
  EXPECT_THAT(std::string(ipo.status().message()), HasSubstr("sigmoid only"));
}

TEST(DpoLoss, RejectsBadShapesAndDtypes) {
  const at::Tensor two = Vec({-1.0, -2.0});
  EXPECT_FALSE(DpoLoss(two, two, two, Vec({-1.0, -2.0, -3.0})).ok());
  EXPECT_FALSE(DpoLoss(two, two, two.reshape({2, 1}), two).ok());
  const at::Tensor empty = Vec({});
  EXPECT_FALSE(DpoLoss(empty, empty, empty, empty).ok());
  EXPECT_FALSE(DpoLoss(two, two, two, two.to(at::kFloat)).ok());
  const at::Tensor ints = at::zeros({2}, at::kLong);
  EXPECT_FALSE(DpoLoss(ints, ints, ints, ints).ok());
}

TEST(DpoLoss, ReportsNonFiniteInputsByName) {
  const at::Tensor two = Vec({-1.0, -2.0});
  absl::StatusOr<DpoLossResult> r = DpoLoss(two, two, Vec({-1.0, -INFINITY}), two);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("reference_chosen_logps: 0 NaN and 1"));
  r = DpoLoss(two, Vec({NAN, -2.0}), two, two);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("policy_rejected_logps: 1 NaN"));
}

}  // namespace
}  // namespace rollout::algorithms
