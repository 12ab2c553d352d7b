// verl's learning-rate schedules, against values computed by hand from its formulas.
#include "workers/lr_schedule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rollout::workers {
namespace {

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

}  // namespace
}  // namespace rollout::workers
