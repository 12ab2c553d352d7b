// verl's learning-rate schedules (FSDP's and Megatron's), against values computed by hand
// from their formulas.
#include "workers/lr_schedule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>

#include "workers/role_options.h"

namespace rollout::workers {
namespace {

using ::testing::HasSubstr;

LrScheduleOptions Options(const std::string& style, int64_t warmup, int64_t total) {
  LrScheduleOptions options;
  options.lr = 1.0;
  options.warmup_style = style;
  options.lr_warmup_steps = warmup;
  options.total_training_steps = total;
  return options;
}

TEST(LrSchedule, ConstantWarmsUpLinearlyFromZero) {
  const LrSchedule schedule = LrSchedule::Create(Options("constant", 4, 100)).value();
  EXPECT_DOUBLE_EQ(schedule.LrAt(0), 0.0);
  EXPECT_DOUBLE_EQ(schedule.LrAt(1), 0.25);
  EXPECT_DOUBLE_EQ(schedule.LrAt(3), 0.75);
  EXPECT_DOUBLE_EQ(schedule.LrAt(4), 1.0);
  EXPECT_DOUBLE_EQ(schedule.LrAt(1000), 1.0);
}

TEST(LrSchedule, ConstantWithoutWarmupIsFlat) {
  const LrSchedule schedule = LrSchedule::Create(Options("constant", -1, 10)).value();
  EXPECT_EQ(schedule.warmup_steps(), 0);
  EXPECT_DOUBLE_EQ(schedule.LrAt(0), 1.0);
}

TEST(LrSchedule, CosineWarmsUpFromTheFloorThenDecaysToIt) {
  LrScheduleOptions options = Options("cosine", 2, 10);
  options.min_lr_ratio = 0.1;
  const LrSchedule schedule = LrSchedule::Create(options).value();
  EXPECT_DOUBLE_EQ(schedule.LrAt(0), 0.1);
  EXPECT_DOUBLE_EQ(schedule.LrAt(1), 0.55);
  EXPECT_DOUBLE_EQ(schedule.LrAt(2), 1.0);
  EXPECT_NEAR(schedule.LrAt(6), 0.55, 1e-12);  // half way: cos(pi / 2) = 0
  EXPECT_NEAR(schedule.LrAt(10), 0.1, 1e-12);
}

TEST(LrSchedule, WarmupStepsComeFromTheRatioWhenNotGiven) {
  LrScheduleOptions options = Options("constant", -1, 10);
  options.lr_warmup_steps_ratio = 0.25;
  EXPECT_EQ(LrSchedule::Create(options).value().warmup_steps(), 2);
}

TEST(LrSchedule, BadOptionsAreErrors) {
  EXPECT_THAT(LrSchedule::Create(Options("linear", 0, 10)).status().message(),
              ::testing::HasSubstr("unknown optim.warmup_style 'linear'"));
  LrScheduleOptions options = Options("cosine", 0, 10);
  options.min_lr_ratio = 1.5;
  EXPECT_THAT(LrSchedule::Create(options).status().message(),
              ::testing::HasSubstr("optim.min_lr_ratio is 1.5"));
}

LrScheduleOptions Megatron(const std::string& style, int64_t warmup, int64_t total) {
  LrScheduleOptions options = Options("constant", warmup, total);
  options.megatron.emplace().lr_decay_style = style;
  return options;
}

// Expected values from Megatron's OptimizerParamScheduler.get_lr, worked by hand.
TEST(LrSchedule, MegatronWarmsUpFromItsInitialLrAndHoldsLrWhenConstant) {
  LrScheduleOptions options = Megatron("constant", 4, 10);
  options.megatron->lr_warmup_init = 0.2;
  const LrSchedule schedule = LrSchedule::Create(options).value();
  EXPECT_DOUBLE_EQ(schedule.LrAt(0), 0.2);
  EXPECT_DOUBLE_EQ(schedule.LrAt(2), 0.6);
  EXPECT_DOUBLE_EQ(schedule.LrAt(4), 1.0);  // the last warmup step reaches lr
  EXPECT_DOUBLE_EQ(schedule.LrAt(9), 1.0);
  EXPECT_DOUBLE_EQ(schedule.LrAt(50), 1.0);
}

TEST(LrSchedule, MegatronDecaysToMinLrOverItsDecayStepsAndStaysThere) {
  LrScheduleOptions cosine = Megatron("cosine", 2, 10);
  cosine.megatron->min_lr = 0.1;
  const LrSchedule by_cosine = LrSchedule::Create(cosine).value();
  EXPECT_DOUBLE_EQ(by_cosine.LrAt(1), 0.5);          // warmup from 0
  EXPECT_DOUBLE_EQ(by_cosine.LrAt(2), 1.0);
  EXPECT_NEAR(by_cosine.LrAt(6), 0.55, 1e-12);       // (6 - 2) / (10 - 2): cos(pi / 2) = 0
  EXPECT_NEAR(by_cosine.LrAt(10), 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(by_cosine.LrAt(11), 0.1);         // past the decay steps: min_lr
  LrScheduleOptions linear = cosine;
  linear.megatron->lr_decay_style = "linear";
  EXPECT_NEAR(LrSchedule::Create(linear).value().LrAt(4), 0.1 + 0.9 * 0.75, 1e-12);
  cosine.megatron->lr_decay_steps = 18;  // its own horizon, not total_training_steps'
  EXPECT_NEAR(LrSchedule::Create(cosine).value().LrAt(10), 0.55, 1e-12);
}

TEST(LrSchedule, MegatronInverseSquareRootFallsFromTheWarmupsEndToMinLr) {
  LrScheduleOptions options = Megatron("inverse-square-root", 4, 1000);
  options.megatron->min_lr = 0.3;
  const LrSchedule schedule = LrSchedule::Create(options).value();
  EXPECT_DOUBLE_EQ(schedule.LrAt(16), 0.5);  // sqrt(4) / sqrt(16)
  EXPECT_DOUBLE_EQ(schedule.LrAt(100), 0.3);  // sqrt(4) / sqrt(100) = 0.2, below min_lr
}

TEST(LrSchedule, MegatronWsdHoldsLrThenDecaysOverItsLastSteps) {
  const std::pair<const char*, double> styles[] = {
      {"linear", 0.5}, {"cosine", 0.5}, {"exponential", 2 * std::sqrt(0.5) - 1}, {"minus_sqrt", 1 - std::sqrt(0.5)}};
  for (const auto& [style, halfway] : styles) {
    LrScheduleOptions options = Megatron("WSD", 0, 10);
    options.megatron->lr_wsd_decay_steps = 4;
    options.megatron->lr_wsd_decay_style = style;
    const LrSchedule schedule = LrSchedule::Create(options).value();
    EXPECT_DOUBLE_EQ(schedule.LrAt(6), 1.0) << style;  // the decay starts after step 10 - 4
    EXPECT_NEAR(schedule.LrAt(8), halfway, 1e-12) << style;
    EXPECT_NEAR(schedule.LrAt(10), 0.0, 1e-12) << style;
  }
}

TEST(LrSchedule, MegatronTakesWarmupStepsFromTheRatioOfItsDecayStepsUnlessPositive) {
  LrScheduleOptions options = Megatron("constant", 0, 10);
  options.lr_warmup_steps_ratio = 0.25;
  options.megatron->lr_decay_steps = 20;
  EXPECT_EQ(LrSchedule::Create(options).value().warmup_steps(), 5);  // 0 steps: from the ratio, unlike FSDP's
  options.lr_warmup_steps = 3;
  EXPECT_EQ(LrSchedule::Create(options).value().warmup_steps(), 3);
}

TEST(LrSchedule, MegatronRefusesWhatItsSchedulerAsserts) {
  const auto error = [](const LrScheduleOptions& options) {
    return std::string(LrSchedule::Create(options).status().message());
  };
  EXPECT_THAT(error(Megatron("cosine", 0, 0)), HasSubstr("needs decay steps"));
  EXPECT_THAT(error(Megatron("cosine", 10, 10)), HasSubstr("warmup of 10 steps is not shorter than the 10 decay"));
  LrScheduleOptions options = Megatron("linear", 0, 10);
  options.megatron->min_lr = 2;
  EXPECT_THAT(error(options), HasSubstr("optim.min_lr is 2; expected [0, optim.lr = 1]"));
  EXPECT_THAT(error(Megatron("WSD", 0, 10)), HasSubstr("WSD needs optim.lr_wsd_decay_steps"));
  EXPECT_THAT(error(Megatron("inverse_square_root", 0, 10)), HasSubstr("unknown optim.lr_decay_style"));
}

// ScheduleFrom reads Megatron's keys once any is set; unset, the FSDP schedule.
TEST(LrSchedule, ScheduleFromFollowsTheFamilyTheOptimizerConfigWrites) {
  config::OptimConfig optim;
  EXPECT_FALSE(ScheduleFrom(optim, 10).megatron.has_value());
  optim.set_min_lr(1e-7);
  const LrScheduleOptions megatron = ScheduleFrom(optim, 10);
  ASSERT_TRUE(megatron.megatron.has_value());
  EXPECT_EQ(megatron.megatron->lr_decay_style, "constant");
  EXPECT_DOUBLE_EQ(megatron.megatron->min_lr, 1e-7);
  EXPECT_EQ(megatron.megatron->lr_decay_steps, 0);
  EXPECT_EQ(megatron.megatron->lr_wsd_decay_style, "exponential");
}

}  // namespace
}  // namespace rollout::workers
