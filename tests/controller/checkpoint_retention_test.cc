// Retention: the plan (table-driven) and retention on disk, across restarts.
#include "controller/checkpoint_retention.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "controller/checkpoint_layout.h"
#include "controller/checkpoint_store.h"
#include "tests/controller/checkpoint_test_util.h"
#include "tests/support/fault_injecting_file_system.h"
#include "tests/support/temp_dir.h"

namespace rollout::controller {
namespace {

using ::rollout::testing::FaultInjectingFileSystem;
using ::rollout::testing::PathExists;
using ::rollout::testing::SaveCheckpoint;
using ::rollout::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

CheckpointInfo Info(int64_t step, CheckpointState state,
                    std::vector<std::string> roles = {"actor", "critic"}) {
  CheckpointInfo info;
  info.step = step;
  info.state = state;
  info.roles = std::move(roles);
  return info;
}

constexpr CheckpointState kComplete = CheckpointState::kComplete;

std::vector<std::string> Describe(const RetentionPlan& plan) {
  std::vector<std::string> lines;
  for (const RetentionPlan::RoleRemoval& removal : plan.remove_roles) {
    for (const std::string& role : removal.roles)
      lines.push_back(absl::StrCat(removal.step, "/", role));
  }
  for (int64_t step : plan.remove_steps) lines.push_back(absl::StrCat(step));
  return lines;
}

struct PlanCase {
  const char* name;
  std::vector<CheckpointInfo> checkpoints;
  RetentionOptions options;
  std::optional<int64_t> tracker;
  std::vector<std::string> expected;  // "step/role" removals, then whole steps
};

TEST(PlanRetention, Table) {
  const std::vector<PlanCase> cases = {
      {"keep all", {Info(10, kComplete), Info(20, kComplete)}, {0, 0}, 20, {}},
      {"keep one of each",
       {Info(10, kComplete), Info(20, kComplete), Info(30, kComplete)},
       {1, 1},
       30,
       {"10", "20"}},
      {"actor one, critic two",
       {Info(10, kComplete), Info(20, kComplete), Info(30, kComplete)},
       {1, 2},
       30,
       {"20/actor", "10"}},
      {"the tracker's checkpoint stays",
       {Info(10, kComplete), Info(20, kComplete), Info(30, kComplete)},
       {1, 1},
       10,
       {"20"}},
      {"the newest complete stays even if the tracker lags",
       {Info(10, kComplete), Info(20, kComplete)},
       {1, 1},
       10,
       {}},
      {"partial and corrupt are never touched",
       {Info(10, CheckpointState::kCorrupt), Info(20, CheckpointState::kPartial),
        Info(30, kComplete), Info(40, kComplete)},
       {1, 1},
       40,
       {"30"}},
      {"no complete checkpoint: nothing",
       {Info(10, CheckpointState::kPartial)},
       {1, 1},
       std::nullopt,
       {}},
      {"deleted after load goes once a newer one is complete",
       {Info(10, CheckpointState::kDeletedAfterLoad, {}), Info(20, kComplete)},
       {0, 0},
       20,
       {"10"}},
      {"deleted after load stays while it is the newest",
       {Info(10, kComplete), Info(20, CheckpointState::kDeletedAfterLoad, {})},
       {1, 1},
       20,
       {}},
      {"counting is per role",
       {Info(10, kComplete, {"actor"}), Info(20, kComplete, {"critic"}),
        Info(30, kComplete, {"critic"})},
       {1, 1},
       30,
       {"20"}},
  };
  for (const PlanCase& c : cases) {
    EXPECT_THAT(Describe(PlanRetention(c.checkpoints, c.options, c.tracker)),
                ::testing::ElementsAreArray(c.expected))
        << c.name;
  }
}

TEST(PlanRetention, FinishesInterruptedRemovals) {
  CheckpointInfo interrupted = Info(10, kComplete, {"actor"});
  interrupted.unfinished_removals = {"critic"};
  EXPECT_THAT(Describe(PlanRetention({interrupted, Info(20, kComplete)}, {0, 0}, 20)),
              ElementsAre("10/critic"));
}

std::vector<int64_t> Steps(const std::string& root) {
  std::vector<int64_t> steps;
  const std::vector<CheckpointInfo> checkpoints =
      ListCheckpoints(*DefaultFileSystem(), root, VerifyLevel::kChecksums).value();
  for (const CheckpointInfo& info : checkpoints) {
    EXPECT_EQ(info.state, CheckpointState::kComplete) << info.path << ": " << info.problem;
    steps.push_back(info.step);
  }
  return steps;
}

TEST(Retention, KeepOneRemovesTheOldOnlyAfterTheNewIsComplete) {
  TempDir root("retention");
  CheckpointStore store(DefaultFileSystem(), root.path(), {1, 1});
  ASSERT_TRUE(SaveCheckpoint(store, 10).ok());
  const std::string staging = store.BeginSave(20).value();
  testing::WriteRoleFiles(staging, 20, {"actor", "critic"});
  EXPECT_THAT(Steps(root.path()), ElementsAre(10));  // in flight: the old one stays
  ASSERT_TRUE(store.CommitSave(20, testing::TrainerStateJson(20)).ok());
  EXPECT_THAT(Steps(root.path()), ElementsAre(20));
}

TEST(Retention, KeepOneSurvivesAFailureAtEveryStepOfTheNextSave) {
  int retention_failures = 0;
  for (int n = 1;; ++n) {
    TempDir root("retention");
    FaultInjectingFileSystem fs(DefaultFileSystem());
    CheckpointStore store(&fs, root.path(), {1, 1});
    ASSERT_TRUE(SaveCheckpoint(store, 10).ok());
    const int before = fs.mutations();
    fs.FailNthMutation(n);
    const absl::Status saved = SaveCheckpoint(store, 20);
    if (fs.mutations() - before < n) {  // every step has failed once
      EXPECT_TRUE(saved.ok()) << saved;
      break;
    }
    EXPECT_FALSE(saved.ok()) << "failure " << n;
    retention_failures += absl::StrContains(
        saved.message(), "global_step_20 saved, but retention could not remove global_step_10");
    const std::vector<int64_t> steps = Steps(root.path());
    EXPECT_FALSE(steps.empty()) << "failure " << n;
    const ResumeDecision decision = store.ResolveResume(ResumeMode::kAuto, "").value();
    EXPECT_TRUE(decision.step == 10 || decision.step == 20) << "failure " << n;
  }
  EXPECT_GT(retention_failures, 0);  // failures after the commit were reached and said so
}

TEST(Retention, HoldsAcrossARestartWithFewerToKeep) {
  TempDir root("retention");
  {
    CheckpointStore keep_all(DefaultFileSystem(), root.path());
    for (int64_t step : {10, 20, 30, 40}) ASSERT_TRUE(SaveCheckpoint(keep_all, step).ok());
  }
  CheckpointStore restarted(DefaultFileSystem(), root.path(), {2, 2});
  ASSERT_TRUE(restarted.ApplyRetention().ok());
  EXPECT_THAT(Steps(root.path()), ElementsAre(30, 40));
  ASSERT_TRUE(SaveCheckpoint(restarted, 50).ok());
  EXPECT_THAT(Steps(root.path()), ElementsAre(40, 50));
}

TEST(Retention, ActorAndCriticAreCountedSeparately) {
  TempDir root("retention");
  CheckpointStore store(DefaultFileSystem(), root.path(), {1, 3});
  for (int64_t step : {10, 20, 30, 40}) ASSERT_TRUE(SaveCheckpoint(store, step).ok());
  EXPECT_THAT(Steps(root.path()), ElementsAre(20, 30, 40));  // 10 had no role left
  const std::vector<CheckpointInfo> checkpoints =
      ListCheckpoints(*DefaultFileSystem(), root.path(), VerifyLevel::kChecksums).value();
  EXPECT_THAT(checkpoints[0].roles, ElementsAre("critic"));
  EXPECT_THAT(checkpoints[1].roles, ElementsAre("critic"));
  EXPECT_THAT(checkpoints[2].roles, ElementsAre("actor", "critic"));
  EXPECT_FALSE(PathExists(root.Path("global_step_20/actor")));
  EXPECT_THAT(ReadManifest(*DefaultFileSystem(), root.Path("global_step_20")).value().removed_roles,
              ElementsAre("actor"));
}

TEST(Retention, LeavesWhatIsNotACheckpointAlone) {
  TempDir root("retention");
  root.Write("notes/readme.txt", "mine");
  root.Write("global_step_5/foreign.bin", "no manifest");
  root.Write("global_step_x/file", "not a step");
  root.Write("resolved_recipe.yaml", "x: 1\n");
  CheckpointStore store(DefaultFileSystem(), root.path(), {1, 1});
  for (int64_t step : {10, 20}) ASSERT_TRUE(SaveCheckpoint(store, step).ok());
  EXPECT_THAT(ListDirectory(root.path()).value(),
              ElementsAre("global_step_20", "global_step_5", "global_step_x",
                          "latest_checkpointed_iteration.txt", "notes", "resolved_recipe.yaml"));
}

TEST(Retention, FinishesARemovalACrashInterrupted) {
  TempDir root("retention");
  CheckpointStore store(DefaultFileSystem(), root.path());
  for (int64_t step : {10, 20}) ASSERT_TRUE(SaveCheckpoint(store, step).ok());
  const std::string dir = root.Path("global_step_10");
  const Manifest manifest = ReadManifest(*DefaultFileSystem(), dir).value();
  // The state a crash after the manifest rewrite leaves: critic/ disowned, still there.
  ASSERT_TRUE(WriteFileAtomically(JoinPath(dir, kManifestFile),
                                  ManifestToJson(manifest.WithoutRoles({"critic"})))
                  .ok());
  EXPECT_THAT(Steps(root.path()), ElementsAre(10, 20));
  ASSERT_TRUE(store.ApplyRetention().ok());
  EXPECT_FALSE(PathExists(JoinPath(dir, "critic")));
  EXPECT_TRUE(PathExists(JoinPath(dir, "actor")));
  EXPECT_THAT(Steps(root.path()), ElementsAre(10, 20));
}

}  // namespace
}  // namespace rollout::controller
