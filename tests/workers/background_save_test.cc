// The asynchronous checkpoint write: it writes what a synchronous save writes, reports
// its error through Wait(), and refuses a second write while one is pending.
#include "workers/background_save.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/synchronization/notification.h"
#include "common/file_util.h"
#include "tests/support/temp_dir.h"

namespace rollout::workers {
namespace {

using ::testing::HasSubstr;

// A role whose model part writes `weights` with SaveNamedTensors.
RoleCheckpoint RoleOf(at::Tensor* weights) {
  RoleCheckpoint role;
  role.save_model = [weights](const std::string& dir) {
    return SaveNamedTensors(JoinPath(dir, kModelFile), {{"w", weights}});
  };
  return role;
}

TEST(BackgroundSave, WritesWhatASynchronousSaveWrites) {
  testing::TempDir dir("background_save");
  at::Tensor weights = at::arange(1000, at::kFloat);
  CheckpointParts parts;
  parts.model = true;
  ASSERT_TRUE(SaveRoleCheckpoint(RoleOf(&weights), parts, dir.Path("sync")).ok());
  BackgroundSave save;
  EXPECT_FALSE(save.pending());
  ASSERT_TRUE(save.Start(RoleOf(&weights), parts, dir.Path("async")).ok());
  EXPECT_TRUE(save.pending());
  ASSERT_TRUE(save.Wait().ok());
  EXPECT_FALSE(save.pending());
  EXPECT_EQ(ReadFile(dir.Path("async/model.safetensors")).value(), ReadFile(dir.Path("sync/model.safetensors")).value());
  EXPECT_TRUE(save.Wait().ok());  // nothing pending
}

TEST(BackgroundSave, ReportsTheWritesErrorOnceThroughWait) {
  testing::TempDir dir("background_save_error");
  RoleCheckpoint role;
  role.save_model = [](const std::string&) { return absl::DataLossError("disk on fire"); };
  CheckpointParts parts;
  parts.model = true;
  BackgroundSave save;
  ASSERT_TRUE(save.Start(role, parts, dir.Path("x")).ok());
  const absl::Status status = save.Wait();
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("asynchronous save to " + dir.Path("x")));
  EXPECT_THAT(status.message(), HasSubstr("disk on fire"));
  EXPECT_TRUE(save.Wait().ok());
}

TEST(BackgroundSave, RefusesASecondWriteWhileOneIsPending) {
  testing::TempDir dir("background_save_twice");
  absl::Notification release;
  RoleCheckpoint slow;
  slow.save_model = [&release](const std::string&) {
    release.WaitForNotification();
    return absl::OkStatus();
  };
  CheckpointParts parts;
  parts.model = true;
  BackgroundSave save;
  ASSERT_TRUE(save.Start(slow, parts, dir.Path("a")).ok());
  const absl::Status second = save.Start(slow, parts, dir.Path("b"));
  EXPECT_TRUE(absl::IsFailedPrecondition(second)) << second;
  EXPECT_THAT(second.message(), HasSubstr("the previous one has not been waited for"));
  release.Notify();
  EXPECT_TRUE(save.Wait().ok());
}

}  // namespace
}  // namespace rollout::workers
