// The KL coefficient controllers: verl's fixed and adaptive rules, checkpoint restore,
// and option validation.
#include "algorithms/kl_controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

namespace rollout::algorithms {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<KlController> Adaptive(double kl_coef, double target_kl, double horizon) {
  return MakeKlController(KlControlOptions()
                              .set_type("adaptive")
                              .set_kl_coef(kl_coef)
                              .set_target_kl(target_kl)
                              .set_horizon(horizon))
      .value();
}

TEST(KlController, FixedKeepsItsValue) {
  std::unique_ptr<KlController> fixed = MakeKlController(KlControlOptions()).value();
  EXPECT_EQ(fixed->type(), "fixed");
  EXPECT_DOUBLE_EQ(fixed->value(), 0.001);  // verl's default kl_coef
  ASSERT_TRUE(fixed->Update(5.0, 256).ok());
  EXPECT_DOUBLE_EQ(fixed->value(), 0.001);
}

TEST(KlController, AdaptiveFollowsTheProportionalRule) {
  std::unique_ptr<KlController> ctrl = Adaptive(0.2, 0.1, 100);
  EXPECT_EQ(ctrl->type(), "adaptive");
  // 0.15 / 0.1 - 1 = 0.5, clipped to 0.2: value *= 1 + 0.2 * 10 / 100 = 1.02 -> 0.204.
  ASSERT_TRUE(ctrl->Update(0.15, 10).ok());
  EXPECT_NEAR(ctrl->value(), 0.204, 1e-15);
  // On target: the error is 0 and the value stays.
  ASSERT_TRUE(ctrl->Update(0.1, 10).ok());
  EXPECT_NEAR(ctrl->value(), 0.204, 1e-15);
  // 0.09 / 0.1 - 1 = -0.1 (inside the clip): value *= 1 - 0.1 * 10 / 100 = 0.99 -> 0.20196.
  ASSERT_TRUE(ctrl->Update(0.09, 10).ok());
  EXPECT_NEAR(ctrl->value(), 0.20196, 1e-15);
  // A negative k1 estimate: -0.05 / 0.1 - 1 = -1.5, clipped to -0.2: *= 0.98 -> 0.1979208.
  ASSERT_TRUE(ctrl->Update(-0.05, 10).ok());
  EXPECT_NEAR(ctrl->value(), 0.1979208, 1e-15);
  // No samples, no change.
  ASSERT_TRUE(ctrl->Update(10.0, 0).ok());
  EXPECT_NEAR(ctrl->value(), 0.1979208, 1e-15);
}

TEST(KlController, RestoredControllerContinuesLikeTheOriginal) {
  std::unique_ptr<KlController> original = Adaptive(0.05, 0.02, 50);
  ASSERT_TRUE(original->Update(0.04, 8).ok());
  ASSERT_TRUE(original->Update(0.01, 8).ok());
  const double saved = original->value();
  std::unique_ptr<KlController> resumed = Adaptive(0.05, 0.02, 50);
  ASSERT_TRUE(resumed->RestoreValue(saved).ok());
  EXPECT_EQ(resumed->value(), saved);
  ASSERT_TRUE(original->Update(0.03, 8).ok());
  ASSERT_TRUE(resumed->Update(0.03, 8).ok());
  EXPECT_EQ(resumed->value(), original->value());
}

TEST(KlController, RejectsBadValuesAndLeavesTheCoefficientUnchanged) {
  std::unique_ptr<KlController> ctrl = Adaptive(0.2, 0.1, 1);
  EXPECT_FALSE(ctrl->Update(std::nan(""), 1).ok());
  EXPECT_FALSE(ctrl->Update(std::numeric_limits<double>::infinity(), 1).ok());
  EXPECT_FALSE(ctrl->Update(0.1, -1).ok());
  // 1 - 0.2 * 10 / 1 = -1 would flip the sign of the coefficient.
  absl::Status flip = ctrl->Update(0.0, 10);
  ASSERT_FALSE(flip.ok());
  EXPECT_THAT(std::string(flip.message()), HasSubstr("horizon"));
  EXPECT_FALSE(ctrl->RestoreValue(-0.1).ok());
  EXPECT_FALSE(ctrl->RestoreValue(std::nan("")).ok());
  EXPECT_DOUBLE_EQ(ctrl->value(), 0.2);
  std::unique_ptr<KlController> fixed = MakeKlController(KlControlOptions()).value();
  EXPECT_FALSE(fixed->Update(std::nan(""), 1).ok());
}

TEST(KlController, FactoryValidatesOptions) {
  absl::StatusOr<std::unique_ptr<KlController>> unknown =
      MakeKlController(KlControlOptions().set_type("pid"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(unknown.status().message()), HasSubstr("'pid'"));
  EXPECT_THAT(std::string(unknown.status().message()), HasSubstr("fixed, adaptive"));
  EXPECT_FALSE(MakeKlController(KlControlOptions().set_kl_coef(-1)).ok());
  const KlControlOptions adaptive = KlControlOptions().set_type("adaptive");
  EXPECT_TRUE(MakeKlController(adaptive).ok());
  EXPECT_FALSE(MakeKlController(KlControlOptions(adaptive).set_horizon(0)).ok());
  EXPECT_FALSE(MakeKlController(KlControlOptions(adaptive).set_target_kl(0)).ok());
  EXPECT_FALSE(MakeKlController(KlControlOptions(adaptive).set_target_kl(std::nan(""))).ok());
  // A fixed controller ignores horizon and target_kl, as verl does.
  EXPECT_TRUE(MakeKlController(KlControlOptions().set_horizon(0)).ok());
}

}  // namespace
}  // namespace rollout::algorithms
