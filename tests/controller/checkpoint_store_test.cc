// CheckpointStore: the save protocol, replacing a step, del_local_ckpt_after_load.
#include "controller/checkpoint_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/file_util.h"
#include "controller/checkpoint_layout.h"
#include "tests/controller/checkpoint_test_util.h"
#include "tests/support/fault_injecting_file_system.h"
#include "tests/support/temp_dir.h"

namespace rollout::controller {
namespace {

using ::rollout::testing::FaultInjectingFileSystem;
using ::rollout::testing::PathExists;
using ::rollout::testing::SaveCheckpoint;
using ::rollout::testing::TempDir;
using ::rollout::testing::TrackerContents;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Entries(const std::string& dir) { return ListDirectory(dir).value(); }

std::vector<CheckpointInfo> Checkpoints(const std::string& root) {
  return ListCheckpoints(*DefaultFileSystem(), root, VerifyLevel::kChecksums).value();
}

TEST(CheckpointStore, SaveWritesTheLayoutAndTheTracker) {
  TempDir root("store");
  CheckpointStore store(DefaultFileSystem(), root.path());
  const std::string staging = store.BeginSave(10).value();
  EXPECT_EQ(staging, root.Path(".global_step_10.partial"));
  testing::WriteRoleFiles(staging, 10, {"actor", "critic"});
  EXPECT_EQ(TrackerContents(root.path()), "");  // nothing committed yet
  ASSERT_TRUE(store.CommitSave(10, testing::TrainerStateJson(10)).ok());
  EXPECT_THAT(Entries(root.path()),
              ElementsAre("global_step_10", "latest_checkpointed_iteration.txt"));
  EXPECT_THAT(Entries(root.Path("global_step_10")),
              ElementsAre("MANIFEST.json", "actor", "critic", "trainer_state.json"));
  EXPECT_EQ(ReadFile(root.Path("global_step_10/trainer_state.json")).value(),
            testing::TrainerStateJson(10));
  EXPECT_EQ(TrackerContents(root.path()), "10");
  const std::vector<CheckpointInfo> checkpoints = Checkpoints(root.path());
  ASSERT_EQ(checkpoints.size(), 1u);
  EXPECT_EQ(checkpoints[0].state, CheckpointState::kComplete) << checkpoints[0].problem;
  EXPECT_THAT(checkpoints[0].roles, ElementsAre("actor", "critic"));
  const Manifest manifest = ReadManifest(*DefaultFileSystem(), root.Path("global_step_10")).value();
  EXPECT_EQ(manifest.files.back().path, "trainer_state.json");
}

TEST(CheckpointStore, CommitWithoutBeginIsFailedPrecondition) {
  TempDir root("store");
  CheckpointStore store(DefaultFileSystem(), root.path());
  const absl::Status status = store.CommitSave(10, "{}");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("no staging directory"));
  EXPECT_EQ(store.BeginSave(-1).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CheckpointStore, BeginSaveRemovesScratchOfACrashedRunAndNothingElse) {
  TempDir root("store");
  root.Write(".global_step_5.partial/actor/model.safetensors", "half");
  root.Write(".global_step_3.deleting/critic/x", "old");
  root.Write("notes/readme.txt", "mine");
  root.Write("global_step_2/foreign.bin", "not ours");
  root.Write(".global_step_x.partial/keep", "not a scratch name");
  CheckpointStore store(DefaultFileSystem(), root.path());
  ASSERT_TRUE(store.BeginSave(10).ok());
  EXPECT_THAT(Entries(root.path()), ElementsAre(".global_step_10.partial", ".global_step_x.partial",
                                                "global_step_2", "notes"));
}

TEST(CheckpointStore, SavingAnExistingStepReplacesIt) {
  TempDir root("store");
  CheckpointStore store(DefaultFileSystem(), root.path());
  ASSERT_TRUE(SaveCheckpoint(store, 10).ok());
  ASSERT_TRUE(SaveCheckpoint(store, 20).ok());
  ASSERT_TRUE(SaveCheckpoint(store, 20, {"actor"}).ok());  // a run resumed from 10
  const std::vector<CheckpointInfo> checkpoints = Checkpoints(root.path());
  ASSERT_EQ(checkpoints.size(), 2u);
  EXPECT_EQ(checkpoints[1].state, CheckpointState::kComplete);
  EXPECT_THAT(checkpoints[1].roles, ElementsAre("actor"));
  EXPECT_EQ(TrackerContents(root.path()), "20");
  EXPECT_THAT(Entries(root.path()),
              ElementsAre("global_step_10", "global_step_20", "latest_checkpointed_iteration.txt"));
}

TEST(CheckpointStore, WithoutRenameExchangeTheTrackerNamesAnOlderCheckpointMeanwhile) {
  TempDir root("store");
  FaultInjectingFileSystem fs(DefaultFileSystem());
  fs.set_exchange_supported(false);
  CheckpointStore store(&fs, root.path());
  ASSERT_TRUE(SaveCheckpoint(store, 10).ok());
  ASSERT_TRUE(SaveCheckpoint(store, 20).ok());
  ASSERT_TRUE(SaveCheckpoint(store, 20, {"actor"}).ok());
  const std::vector<CheckpointInfo> checkpoints = Checkpoints(root.path());
  ASSERT_EQ(checkpoints.size(), 2u);
  EXPECT_THAT(checkpoints[1].roles, ElementsAre("actor"));
  EXPECT_EQ(TrackerContents(root.path()), "20");
  EXPECT_THAT(Entries(root.path()),
              ElementsAre("global_step_10", "global_step_20", "latest_checkpointed_iteration.txt"));
}

TEST(CheckpointStore, WithoutRenameExchangeOrAnOlderCheckpointReplacingIsRefused) {
  TempDir root("store");
  FaultInjectingFileSystem fs(DefaultFileSystem());
  fs.set_exchange_supported(false);
  CheckpointStore store(&fs, root.path());
  ASSERT_TRUE(SaveCheckpoint(store, 20).ok());
  const absl::Status status = SaveCheckpoint(store, 20, {"actor"});
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("no older complete checkpoint"));
  const std::vector<CheckpointInfo> checkpoints = Checkpoints(root.path());
  ASSERT_EQ(checkpoints.size(), 1u);
  EXPECT_EQ(checkpoints[0].state, CheckpointState::kComplete);
  EXPECT_THAT(checkpoints[0].roles, ElementsAre("actor", "critic"));  // the old one, intact
  EXPECT_EQ(TrackerContents(root.path()), "20");
}

TEST(DeleteAfterLoad, ReallyDeletesTheRoleDirectoriesAndKeepsTheState) {
  TempDir root("store");
  CheckpointStore store(DefaultFileSystem(), root.path());
  ASSERT_TRUE(SaveCheckpoint(store, 10).ok());
  ASSERT_TRUE(SaveCheckpoint(store, 20).ok());
  ASSERT_TRUE(store.DeleteAfterLoad(20).ok());
  EXPECT_THAT(Entries(root.Path("global_step_20")),
              ElementsAre("MANIFEST.json", "trainer_state.json"));
  EXPECT_EQ(TrackerContents(root.path()), "20");
  const std::vector<CheckpointInfo> checkpoints = Checkpoints(root.path());
  EXPECT_EQ(checkpoints[1].state, CheckpointState::kDeletedAfterLoad);
  EXPECT_TRUE(checkpoints[1].roles.empty());
  EXPECT_TRUE(store.DeleteAfterLoad(20).ok());  // idempotent
  EXPECT_EQ(store.DeleteAfterLoad(30).code(), absl::StatusCode::kNotFound);
}

TEST(DeleteAfterLoad, ResumingAutoAfterwardsIsAClearErrorNotAFreshStart) {
  TempDir root("store");
  CheckpointStore store(DefaultFileSystem(), root.path());
  ASSERT_TRUE(SaveCheckpoint(store, 10).ok());
  ASSERT_TRUE(SaveCheckpoint(store, 20).ok());
  ASSERT_TRUE(store.DeleteAfterLoad(20).ok());
  const absl::StatusOr<ResumeDecision> decision = store.ResolveResume(ResumeMode::kAuto, "");
  EXPECT_EQ(decision.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(decision.status().message(),
              HasSubstr("checkpoint global_step_20 was deleted after loading "
                        "(trainer.del_local_ckpt_after_load) and no newer checkpoint exists"));
  EXPECT_EQ(
      store.ResolveResume(ResumeMode::kResumePath, root.Path("global_step_20")).status().code(),
      absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store.ResolveResume(ResumeMode::kResumePath, root.Path("global_step_10")).value().step,
            10);
}

TEST(DeleteAfterLoad, RetentionRemovesItOnceANewerCheckpointIsComplete) {
  TempDir root("store");
  CheckpointStore store(DefaultFileSystem(), root.path());  // keep all
  ASSERT_TRUE(SaveCheckpoint(store, 10).ok());
  ASSERT_TRUE(SaveCheckpoint(store, 20).ok());
  ASSERT_TRUE(store.DeleteAfterLoad(20).ok());
  ASSERT_TRUE(store.ApplyRetention().ok());
  EXPECT_TRUE(PathExists(root.Path("global_step_20")));  // still the newest with a manifest
  ASSERT_TRUE(SaveCheckpoint(store, 30).ok());
  EXPECT_FALSE(PathExists(root.Path("global_step_20")));
  EXPECT_TRUE(PathExists(root.Path("global_step_10")));
  EXPECT_EQ(store.ResolveResume(ResumeMode::kAuto, "").value().step, 30);
}

}  // namespace
}  // namespace rollout::controller
