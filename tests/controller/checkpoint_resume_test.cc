// CheckpointStore::ResolveResume: trainer.resume_mode auto | disable | resume_path.
#include "controller/checkpoint_resume.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/file_util.h"
#include "controller/checkpoint_store.h"
#include "tests/controller/checkpoint_test_util.h"
#include "tests/support/temp_dir.h"

namespace rollout::controller {
namespace {

using ::rollout::testing::SaveCheckpoint;
using ::rollout::testing::TempDir;
using ::rollout::testing::TrackerContents;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ResumeTest : public ::testing::Test {
 protected:
  void SaveTwo() {
    ASSERT_TRUE(SaveCheckpoint(store_, 10).ok());
    ASSERT_TRUE(SaveCheckpoint(store_, 20).ok());
  }
  absl::StatusOr<ResumeDecision> Auto() { return store_.ResolveResume(ResumeMode::kAuto, ""); }
  void FlipOneBit(const std::string& relative) {
    const std::string path = root_.Path(relative);
    std::string contents = ReadFile(path).value();
    contents[contents.size() / 3] ^= 0x40;
    ASSERT_TRUE(WriteFileDurably(path, contents).ok());
  }

  TempDir root_{"resume"};
  CheckpointStore store_{DefaultFileSystem(), root_.path()};
};

TEST(ResumeMode, ParsesVerlNames) {
  EXPECT_EQ(ParseResumeMode("auto").value(), ResumeMode::kAuto);
  EXPECT_EQ(ParseResumeMode("disable").value(), ResumeMode::kDisable);
  EXPECT_EQ(ParseResumeMode("resume_path").value(), ResumeMode::kResumePath);
  EXPECT_EQ(ParseResumeMode("latest").status().message(),
            "trainer.resume_mode must be auto, disable or resume_path, not 'latest'");
}

TEST_F(ResumeTest, DisableStartsFreshEvenWithCheckpoints) {
  SaveTwo();
  const ResumeDecision decision = store_.ResolveResume(ResumeMode::kDisable, "").value();
  EXPECT_EQ(decision.step, std::nullopt);
  EXPECT_EQ(decision.message, "trainer.resume_mode is disable: starting fresh");
}

TEST_F(ResumeTest, AutoWithNoCheckpointSaysItStartsFresh) {
  CheckpointStore missing(DefaultFileSystem(), root_.Path("not/yet"));
  const ResumeDecision decision = missing.ResolveResume(ResumeMode::kAuto, "").value();
  EXPECT_EQ(decision.step, std::nullopt);
  EXPECT_EQ(decision.message, "no checkpoint in " + root_.Path("not/yet") + ", starting fresh");
  root_.Write("resolved_recipe.yaml", "x: 1\n");
  EXPECT_EQ(Auto().value().step, std::nullopt);
}

TEST_F(ResumeTest, AutoPicksTheNewestCompleteCheckpoint) {
  SaveTwo();
  const ResumeDecision decision = Auto().value();
  EXPECT_EQ(decision.step, 20);
  EXPECT_EQ(decision.path, root_.Path("global_step_20"));
  EXPECT_THAT(decision.roles, ElementsAre("actor", "critic"));
  EXPECT_EQ(decision.message, "resuming from " + root_.Path("global_step_20"));
}

TEST_F(ResumeTest, ALaggingTrackerIsRepaired) {
  SaveTwo();
  root_.Write("latest_checkpointed_iteration.txt", "10");  // crash before the tracker update
  const ResumeDecision decision = Auto().value();
  EXPECT_EQ(decision.step, 20);
  EXPECT_THAT(decision.message, HasSubstr("the tracker named global_step_10"));
  EXPECT_EQ(TrackerContents(root_.path()), "20");
}

TEST_F(ResumeTest, ATrackerNamingAMissingDirectoryIsDataLoss) {
  SaveTwo();
  root_.Write("latest_checkpointed_iteration.txt", "30");
  EXPECT_EQ(Auto().status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(Auto().status().message(), root_.Path("latest_checkpointed_iteration.txt") +
                                           " names global_step_30, which does not exist");
  root_.Write("latest_checkpointed_iteration.txt", "garbage");
  EXPECT_EQ(Auto().status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(ResumeTest, ALeftoverTrackerTemporaryFileIsIgnored) {
  SaveTwo();
  root_.Write("latest_checkpointed_iteration.txt.tmp", "3");
  EXPECT_EQ(Auto().value().step, 20);
}

TEST_F(ResumeTest, ACorruptNewestCheckpointIsDataLossNamingTheFile) {
  SaveTwo();
  FlipOneBit("global_step_20/actor/model.safetensors");
  EXPECT_EQ(Auto().status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(Auto().status().message(),
            "checkpoint global_step_20: checksum mismatch for actor/model.safetensors");
}

TEST_F(ResumeTest, PartialDirectoriesAreNeverLoaded) {
  SaveTwo();
  testing::WriteRoleFiles(root_.Path("global_step_30"), 30, {"actor"});  // no manifest
  testing::WriteRoleFiles(root_.Path(".global_step_40.partial"), 40, {"actor"});
  const ResumeDecision decision = Auto().value();
  EXPECT_EQ(decision.step, 20);
  EXPECT_THAT(decision.message, HasSubstr("ignored global_step_30: no MANIFEST.json"));
}

TEST_F(ResumeTest, OnlyPartialDirectoriesIsDataLossNotAFreshStart) {
  testing::WriteRoleFiles(root_.Path("global_step_30"), 30, {"actor"});
  EXPECT_EQ(Auto().status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(Auto().status().message(), HasSubstr("global_step_30 has no MANIFEST.json"));
}

TEST_F(ResumeTest, ResumePathLoadsExactlyThatCheckpoint) {
  SaveTwo();
  const ResumeDecision decision =
      store_.ResolveResume(ResumeMode::kResumePath, root_.Path("global_step_10/")).value();
  EXPECT_EQ(decision.step, 10);
  EXPECT_EQ(TrackerContents(root_.path()), "20");  // untouched
}

TEST_F(ResumeTest, ResumePathToAMissingPartialOrCorruptCheckpointIsAnError) {
  SaveTwo();
  const auto resume = [&](const std::string& path) {
    return store_.ResolveResume(ResumeMode::kResumePath, path).status();
  };
  EXPECT_EQ(resume(root_.Path("global_step_30")).code(), absl::StatusCode::kNotFound);
  testing::WriteRoleFiles(root_.Path("global_step_30"), 30, {"actor"});
  EXPECT_EQ(resume(root_.Path("global_step_30")).code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(resume(root_.Path("global_step_30")).message(),
              HasSubstr("checkpoint global_step_30: no MANIFEST.json"));
  ASSERT_TRUE(RemoveTree(root_.Path("global_step_10/critic/optim.pt")).ok());
  EXPECT_EQ(resume(root_.Path("global_step_10")).message(),
            "checkpoint global_step_10: missing file critic/optim.pt");
  EXPECT_EQ(resume("").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(resume(root_.Path("global_step_20/actor")).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rollout::controller
