// FlagSet::ParseFlagsOnly, as the benchmarks use it: go on with the values set, or the
// exit status to stop with after --help or a bad argument.
#include "common/flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace rollout {
namespace {

using ::testing::HasSubstr;

struct BenchFlags {
  int64_t steps = 3;
  FlagSet flags{"bench [flags]", "Times something."};
  BenchFlags() { flags.AddInt("steps", &steps, "timed steps"); }
};

TEST(ParseFlagsOnly, GoesOnWithTheValuesSet) {
  BenchFlags f;
  EXPECT_EQ(f.flags.ParseFlagsOnly({"--steps=7"}, "bench"), std::nullopt);
  EXPECT_EQ(f.steps, 7);
}

TEST(ParseFlagsOnly, HelpPrintsTheUsageAndStopsWithZero) {
  BenchFlags f;
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(f.flags.ParseFlagsOnly({"--help"}, "bench"), 0);
  EXPECT_THAT(::testing::internal::GetCapturedStdout(), HasSubstr("bench [flags]"));
}

TEST(ParseFlagsOnly, BadFlagsAndPositionalArgumentsStopWithTwo) {
  BenchFlags f;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(f.flags.ParseFlagsOnly({"--steps=many"}, "bench"), 2);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("bench: "));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(f.flags.ParseFlagsOnly({"extra"}, "bench"), 2);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("bench: unexpected argument 'extra'"));
}

}  // namespace
}  // namespace rollout
