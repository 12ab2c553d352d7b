#include "common/crash_point.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rollout {
namespace {

using ::testing::HasSubstr;

TEST(CrashPoint, UnknownNameIsInvalidArgumentListingTheKnownOnes) {
  const absl::Status armed = ArmCrashPoint("ckpt.save.after_lunch");
  EXPECT_EQ(armed.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(armed.message(), HasSubstr("unknown crash point 'ckpt.save.after_lunch'"));
  EXPECT_THAT(armed.message(), HasSubstr("ckpt.save.after_rename"));
}

TEST(CrashPoint, EveryKnownNameCanBeArmedAndIsUnique) {
  const std::vector<std::string>& known = KnownCrashPoints();
  EXPECT_GE(known.size(), 10u);
  for (size_t i = 0; i < known.size(); ++i) {
    for (size_t j = i + 1; j < known.size(); ++j) EXPECT_NE(known[i], known[j]);
  }
  // Arming happens in a child so that this process stays unarmed.
  EXPECT_EXIT(
      {
        for (const std::string& name : known) {
          if (!ArmCrashPoint(name).ok()) _exit(1);
        }
        _exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(CrashPoint, CallingAnUnlistedPointIsAProgrammerError) {
  EXPECT_DEATH(CrashPoint("ckpt.nowhere"), "crash point 'ckpt.nowhere' is not in KnownCrashPoints");
}

TEST(CrashPoint, ArmedPointExitsWithItsCodeAndSaysWhere) {
  EXPECT_EXIT(
      {
        if (!ArmCrashPoint("ckpt.save.after_manifest").ok()) _exit(1);
        CrashPoint("ckpt.save.after_rename");  // another point: passes
        CrashPoint("ckpt.save.after_manifest");
        _exit(0);
      },
      ::testing::ExitedWithCode(kCrashPointExitCode),
      "rollout: crash point ckpt.save.after_manifest reached");
}

}  // namespace
}  // namespace rollout
