// Loading reward plug-ins through the C ABI: the example plug-in scores, and broken
// plug-ins fail with messages that say what is wrong.
#include "rewards/plugin_reward.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rollout::rewards {
namespace {

using ::testing::HasSubstr;

TEST(RewardPlugin, ExamplePluginScoresAndReportsExtras) {
  absl::StatusOr<std::unique_ptr<RewardFunction>> reward = LoadRewardPlugin(EXAMPLE_PLUGIN_PATH);
  ASSERT_TRUE(reward.ok()) << reward.status();
  EXPECT_EQ((*reward)->name(), "contains_answer");
  RewardInput input;
  input.response = "the answer is 42.";
  input.ground_truth = "42";
  const RewardOutput hit = (*reward)->Score(input).value();
  EXPECT_EQ(hit.score, 1.0);
  EXPECT_EQ(hit.extra.at("response_chars"), 17.0);
  input.ground_truth = "43";
  EXPECT_EQ((*reward)->Score(input).value().score, 0.0);
}

TEST(RewardPlugin, MissingLibraryIsNotFoundWithTheLoadersMessage) {
  const absl::Status status = LoadRewardPlugin("/nonexistent/libnope.so").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("cannot load reward plug-in /nonexistent/libnope.so: "));
}

TEST(RewardPlugin, AbiMismatchNamesBothVersions) {
  const absl::Status status = LoadRewardPlugin(WRONG_ABI_PLUGIN_PATH).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("was built for reward ABI version 2; this rollout supports version 1"));
}

TEST(RewardPlugin, MissingSymbolIsNamed) {
  const absl::Status status = LoadRewardPlugin(MISSING_SYMBOL_PLUGIN_PATH).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("does not export rollout_reward_score"));
}

TEST(RewardPlugin, PluginErrorsCarryTheirMessage) {
  auto reward = LoadRewardPlugin(FAILING_PLUGIN_PATH);
  ASSERT_TRUE(reward.ok()) << reward.status();
  RewardInput input;
  input.ground_truth = "x/y";
  const absl::Status status = (*reward)->Score(input).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(status.message(),
            "reward plug-in 'failing' failed (code 3): cannot parse ground truth 'x/y'");
}

}  // namespace
}  // namespace rollout::rewards
