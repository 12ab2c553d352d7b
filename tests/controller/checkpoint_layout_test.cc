#include "controller/checkpoint_layout.h"

#include <gtest/gtest.h>

namespace rollout::controller {
namespace {

TEST(CheckpointLayout, StepDirNamesRoundTrip) {
  EXPECT_EQ(StepDirName(40), "global_step_40");
  EXPECT_EQ(ParseStepDirName("global_step_40"), 40);
  EXPECT_EQ(ParseStepDirName("global_step_0"), 0);
  EXPECT_EQ(ParseStepDirName("ckpts/run/global_step_7"), 7);
  EXPECT_EQ(ParseStepDirName("/abs/global_step_12/"), 12);
}

TEST(CheckpointLayout, OnlyTheLastComponentCounts) {
  EXPECT_EQ(ParseStepDirName("runs/global_step_7/ckpt"), std::nullopt);
  EXPECT_EQ(ParseStepDirName("global_step_7/actor"), std::nullopt);
  EXPECT_EQ(ParseStepDirName("runs/global_step_7/global_step_9"), 9);
}

TEST(CheckpointLayout, RejectsMalformedStepNumbers) {
  for (const char* name : {"global_step_", "global_step_-1", "global_step_+1", "global_step_12abc",
                           "global_step_1.5", "global_step_007", "global_step_ 3", "xglobal_step_3",
                           "global_step_99999999999999999999", "", "/"}) {
    EXPECT_EQ(ParseStepDirName(name), std::nullopt) << name;
  }
}

TEST(CheckpointLayout, ScratchDirectoryNames) {
  EXPECT_EQ(StagingDirName(40), ".global_step_40.partial");
  EXPECT_EQ(DeletingDirName(40), ".global_step_40.deleting");
  EXPECT_TRUE(IsScratchDirName(".global_step_40.partial"));
  EXPECT_TRUE(IsScratchDirName(".global_step_0.deleting"));
  EXPECT_FALSE(IsScratchDirName("global_step_40"));
  EXPECT_FALSE(IsScratchDirName(".global_step_.partial"));
  EXPECT_FALSE(IsScratchDirName(".global_step_4x.partial"));
  EXPECT_FALSE(IsScratchDirName(".cache"));
  EXPECT_FALSE(IsScratchDirName(".global_step_4.partial.bak"));
}

TEST(CheckpointLayout, TrackerHoldsTheStepAsText) {
  EXPECT_EQ(FormatTracker(40), "40");
  EXPECT_EQ(ParseTracker("40").value(), 40);
  EXPECT_EQ(ParseTracker(" 40\n").value(), 40);
  for (const char* bad : {"", "forty", "-3", "40 41", "4e1"}) {
    const absl::StatusOr<int64_t> step = ParseTracker(bad);
    EXPECT_EQ(step.status().code(), absl::StatusCode::kDataLoss) << bad;
  }
  EXPECT_EQ(ParseTracker("x").status().message(),
            "latest_checkpointed_iteration.txt holds 'x', not a step number");
}

}  // namespace
}  // namespace rollout::controller
