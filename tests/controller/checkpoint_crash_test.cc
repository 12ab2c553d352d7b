// The crash matrix: for every known crash point and every protocol scenario, a
// forked child arms the point and runs the scenario over a root that already holds
// checkpoints; after the child died there, the parent checks what a restart sees:
// the tracker never names a missing or incomplete directory, auto-resume picks a
// complete checkpoint (the old or the new one) and never a partial one, at least
// one complete checkpoint is kept, and running the scenario again completes it.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/crash_point.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "controller/checkpoint_layout.h"
#include "controller/checkpoint_store.h"
#include "tests/controller/checkpoint_test_util.h"
#include "tests/support/fault_injecting_file_system.h"
#include "tests/support/temp_dir.h"

namespace rollout::controller {
namespace {

using ::rollout::testing::FaultInjectingFileSystem;
using ::rollout::testing::SaveCheckpoint;
using ::rollout::testing::TempDir;
using ::testing::ElementsAreArray;

struct Scenario {
  const char* name;
  bool exchange_supported;
  RetentionOptions retention;
  std::function<absl::Status(CheckpointStore&)> prepare;  // before the crash, unarmed
  std::function<absl::Status(CheckpointStore&)> run;      // the child runs this armed
  std::vector<int64_t> resumable;        // steps auto-resume may pick after a crash
  bool may_refuse_resume;                // del_local_ckpt_after_load: FailedPrecondition is right
  std::vector<std::string> final_state;  // "step:state:roles" after `run` completes
};

std::vector<Scenario> Scenarios() {
  const auto save = [](int64_t step, std::vector<std::string> roles = {"actor", "critic"}) {
    return [step, roles](CheckpointStore& store) { return SaveCheckpoint(store, step, roles); };
  };
  const auto save_10_20_30 = [save](CheckpointStore& store) {
    for (int64_t step : {10, 20, 30}) RETURN_IF_ERROR(save(step)(store));
    return absl::OkStatus();
  };
  const auto save_10_20 = [save](CheckpointStore& store) {
    RETURN_IF_ERROR(save(10)(store));
    return save(20)(store);
  };
  const auto delete_20 = [](CheckpointStore& store) { return store.DeleteAfterLoad(20); };
  return {
      {"save with retention",
       true,
       {1, 2},
       save_10_20_30,
       save(40),
       {30, 40},
       false,
       {"30:complete:critic", "40:complete:actor,critic"}},
      {"replace a step",
       true,
       {},
       save_10_20,
       save(20, {"actor"}),
       {20},
       false,
       {"10:complete:actor,critic", "20:complete:actor"}},
      {"replace a step without rename exchange",
       false,
       {},
       save_10_20,
       save(20, {"actor"}),
       {10, 20},
       false,
       {"10:complete:actor,critic", "20:complete:actor"}},
      {"delete after load",
       true,
       {},
       save_10_20,
       delete_20,
       {20},
       true,
       {"10:complete:actor,critic", "20:deleted-after-load:"}},
      {"save after delete after load",
       true,
       {},
       [=](CheckpointStore& store) {
         RETURN_IF_ERROR(save_10_20(store));
         return delete_20(store);
       },
       save(30),
       {30},
       true,
       {"10:complete:actor,critic", "30:complete:actor,critic"}},
  };
}

std::vector<std::string> Describe(const std::string& root) {
  std::vector<std::string> lines;
  const std::vector<CheckpointInfo> checkpoints =
      ListCheckpoints(*DefaultFileSystem(), root, VerifyLevel::kChecksums).value();
  for (const CheckpointInfo& info : checkpoints) {
    lines.push_back(absl::StrCat(info.step, ":", CheckpointStateName(info.state), ":",
                                 absl::StrJoin(info.roles, ",")));
  }
  return lines;
}

// Runs `scenario.run` in a child with `point` armed; true when it died there.
bool CrashesAt(const Scenario& scenario, const std::string& root, const std::string& point) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (!ArmCrashPoint(point).ok()) _exit(3);
    FaultInjectingFileSystem fs(DefaultFileSystem());
    fs.set_exchange_supported(scenario.exchange_supported);
    CheckpointStore store(&fs, root, scenario.retention);
    _exit(scenario.run(store).ok() ? 0 : 4);
  }
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status)) << point;
  const int code = WEXITSTATUS(status);
  EXPECT_TRUE(code == 0 || code == kCrashPointExitCode)
      << scenario.name << " at " << point << ": child exit " << code;
  return code == kCrashPointExitCode;
}

// What a restart sees after the crash.
void CheckAfterCrash(const Scenario& scenario, const std::string& root, const std::string& where) {
  FileSystem& fs = *DefaultFileSystem();
  const std::vector<CheckpointInfo> checkpoints =
      ListCheckpoints(fs, root, VerifyLevel::kChecksums).value();
  int complete = 0;
  for (const CheckpointInfo& info : checkpoints) {
    complete += info.state == CheckpointState::kComplete;
    EXPECT_NE(info.state, CheckpointState::kCorrupt) << where << ": " << info.problem;
    EXPECT_NE(info.state, CheckpointState::kPartial) << where << ": " << info.path;
  }
  EXPECT_GE(complete, 1) << where;
  const std::optional<int64_t> tracker = ReadTracker(fs, root).value();
  ASSERT_TRUE(tracker.has_value()) << where;
  const auto tracked =
      std::find_if(checkpoints.begin(), checkpoints.end(),
                   [&](const CheckpointInfo& info) { return info.step == *tracker; });
  ASSERT_NE(tracked, checkpoints.end()) << where << ": the tracker names a missing directory";
  EXPECT_TRUE(tracked->state == CheckpointState::kComplete ||
              tracked->state == CheckpointState::kDeletedAfterLoad)
      << where << ": the tracker names a " << CheckpointStateName(tracked->state) << " directory";
  CheckpointStore restarted(&fs, root);
  const absl::StatusOr<ResumeDecision> decision = restarted.ResolveResume(ResumeMode::kAuto, "");
  if (!decision.ok() && scenario.may_refuse_resume) {
    EXPECT_EQ(decision.status().code(), absl::StatusCode::kFailedPrecondition) << where;
    return;
  }
  ASSERT_TRUE(decision.ok()) << where << ": " << decision.status();
  ASSERT_TRUE(decision->step.has_value()) << where;
  EXPECT_THAT(scenario.resumable, ::testing::Contains(*decision->step)) << where;
  EXPECT_EQ(InspectCheckpoint(fs, decision->path, VerifyLevel::kChecksums).value().state,
            CheckpointState::kComplete)
      << where;
}

TEST(CheckpointCrashMatrix, EveryCrashPointLeavesAResumableState) {
  std::map<std::string, int> crashes;
  for (const Scenario& scenario : Scenarios()) {
    for (const std::string& point : KnownCrashPoints()) {
      const std::string where = absl::StrCat(scenario.name, ", crash at ", point);
      TempDir root("crash");
      {
        CheckpointStore store(DefaultFileSystem(), root.path(), scenario.retention);
        ASSERT_TRUE(scenario.prepare(store).ok()) << where;
      }
      if (!CrashesAt(scenario, root.path(), point)) {
        EXPECT_THAT(Describe(root.path()), ElementsAreArray(scenario.final_state)) << where;
        continue;
      }
      ++crashes[point];
      CheckAfterCrash(scenario, root.path(), where);
      // The restarted run does it again and ends where an uninterrupted one would.
      FaultInjectingFileSystem fs(DefaultFileSystem());
      fs.set_exchange_supported(scenario.exchange_supported);
      CheckpointStore again(&fs, root.path(), scenario.retention);
      ASSERT_TRUE(scenario.run(again).ok()) << where;
      EXPECT_THAT(Describe(root.path()), ElementsAreArray(scenario.final_state)) << where;
    }
  }
  for (const std::string& point : KnownCrashPoints()) {
    EXPECT_GT(crashes[point], 0) << point << " is reached by no scenario";
  }
}

}  // namespace
}  // namespace rollout::controller
