// Injected I/O failures (a full disk, an fsync error) at every mutating step of a
// save, a replacing save and del_local_ckpt_after_load: the call returns the error,
// and what is left resumes from a complete checkpoint, old or new.
#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/checkpoint_store.h"
#include "tests/controller/checkpoint_test_util.h"
#include "tests/support/fault_injecting_file_system.h"
#include "tests/support/temp_dir.h"

namespace rollout::controller {
namespace {

using ::rollout::testing::FaultInjectingFileSystem;
using ::rollout::testing::SaveCheckpoint;
using ::rollout::testing::TempDir;
using ::testing::HasSubstr;

struct FaultCase {
  const char* name;
  bool exchange_supported;
  RetentionOptions retention;
  std::function<absl::Status(CheckpointStore&)> operation;
  std::vector<int64_t> resumable;  // steps ResolveResume(auto) may pick afterwards
};

// Checkpoints 10 and 20 exist; `operation` runs with its Nth mutation failing, for
// every N until it runs clean.
void RunWithEveryFailure(const FaultCase& c) {
  for (int n = 1;; ++n) {
    TempDir root("fault");
    FaultInjectingFileSystem fs(DefaultFileSystem());
    fs.set_exchange_supported(c.exchange_supported);
    CheckpointStore store(&fs, root.path(), c.retention);
    ASSERT_TRUE(SaveCheckpoint(store, 10).ok());
    ASSERT_TRUE(SaveCheckpoint(store, 20).ok());
    const int before = fs.mutations();
    fs.FailNthMutation(n);
    const absl::Status status = c.operation(store);
    if (fs.mutations() - before < n) {
      ASSERT_TRUE(status.ok()) << c.name << ": " << status;
      ASSERT_GT(n, 3) << c.name << ": too few steps to be the protocol";
      return;
    }
    EXPECT_FALSE(status.ok()) << c.name << ", failure " << n;
    EXPECT_THAT(status.message(), HasSubstr("injected failure")) << c.name;
    CheckpointStore restarted(DefaultFileSystem(), root.path());
    const absl::StatusOr<ResumeDecision> decision = restarted.ResolveResume(ResumeMode::kAuto, "");
    ASSERT_TRUE(decision.ok()) << c.name << ", failure " << n << ": " << decision.status();
    ASSERT_TRUE(decision->step.has_value()) << c.name;
    EXPECT_THAT(c.resumable, ::testing::Contains(*decision->step)) << c.name << ", failure " << n;
    // And the next save goes through, cleaning up after the failed one.
    ASSERT_TRUE(SaveCheckpoint(restarted, 30).ok()) << c.name << ", failure " << n;
    EXPECT_EQ(restarted.ResolveResume(ResumeMode::kAuto, "").value().step, 30);
  }
}

TEST(CheckpointFaults, SaveWithRetention) {
  RunWithEveryFailure({"save",
                       true,
                       {1, 1},
                       [](CheckpointStore& store) { return SaveCheckpoint(store, 30); },
                       {20, 30}});
}

TEST(CheckpointFaults, ReplacingAStep) {
  RunWithEveryFailure({"replace",
                       true,
                       {},
                       [](CheckpointStore& store) { return SaveCheckpoint(store, 20, {"actor"}); },
                       {20}});
}

TEST(CheckpointFaults, ReplacingAStepWithoutRenameExchange) {
  RunWithEveryFailure({"replace without exchange",
                       false,
                       {},
                       [](CheckpointStore& store) { return SaveCheckpoint(store, 20, {"actor"}); },
                       {10, 20}});
}

TEST(CheckpointFaults, DeleteAfterLoad) {
  for (int n = 1;; ++n) {
    TempDir root("fault");
    FaultInjectingFileSystem fs(DefaultFileSystem());
    CheckpointStore store(&fs, root.path());
    ASSERT_TRUE(SaveCheckpoint(store, 10).ok());
    ASSERT_TRUE(SaveCheckpoint(store, 20).ok());
    const int before = fs.mutations();
    fs.FailNthMutation(n);
    const absl::Status status = store.DeleteAfterLoad(20);
    if (fs.mutations() - before < n) {
      ASSERT_TRUE(status.ok()) << status;
      ASSERT_GT(n, 3);
      return;
    }
    EXPECT_FALSE(status.ok()) << "failure " << n;
    // Either 20 is still whole, or it is marked deleted and auto-resume refuses.
    const absl::StatusOr<ResumeDecision> decision = store.ResolveResume(ResumeMode::kAuto, "");
    if (decision.ok()) {
      EXPECT_EQ(decision->step, 20) << "failure " << n;
    } else {
      EXPECT_EQ(decision.status().code(), absl::StatusCode::kFailedPrecondition) << n;
    }
    ASSERT_TRUE(store.DeleteAfterLoad(20).ok()) << "failure " << n;  // a retry finishes
    EXPECT_FALSE(testing::PathExists(root.Path("global_step_20/actor")));
    EXPECT_FALSE(testing::PathExists(root.Path("global_step_20/critic")));
  }
}

}  // namespace
}  // namespace rollout::controller
