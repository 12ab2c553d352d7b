// Choosing the reward function: by name, by plug-in, or by each sample's data_source.
#include "rewards/reward_selector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rollout::rewards {
namespace {

using ::testing::HasSubstr;

RewardSpec Named(const std::string& name) {
  RewardSpec spec;
  spec.name = name;
  return spec;
}

RewardSpec Plugin(const std::string& path) {
  RewardSpec spec;
  spec.plugin = path;
  return spec;
}

RewardInput FromSource(const std::string& data_source) {
  RewardInput input;
  input.data_source = data_source;
  return input;
}

TEST(RewardSelector, NamedRewardScoresEverySample) {
  const auto selector = RewardSelector::Create(Named("exact_match")).value();
  RewardInput input = FromSource("openai/gsm8k");
  input.response = input.ground_truth = "7";
  EXPECT_EQ(selector->Select(input).value()->name(), "exact_match");
  EXPECT_EQ(selector->Score(input).value().score, 1.0);
}

TEST(RewardSelector, WithoutANameRoutesByDataSource) {
  const auto selector = RewardSelector::Create(RewardSpec{}).value();
  EXPECT_EQ(selector->Select(FromSource("openai/gsm8k")).value()->name(), "gsm8k");
  EXPECT_EQ(selector->Select(FromSource("lighteval/MATH")).value()->name(), "math");
  const absl::Status unknown = selector->Select(FromSource("mystery")).status();
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.message(), HasSubstr("no reward for data_source 'mystery'"));
}

TEST(RewardSelector, PluginIsLoaded) {
  const auto selector = RewardSelector::Create(Plugin(EXAMPLE_PLUGIN_PATH)).value();
  EXPECT_EQ(selector->Select(RewardInput{}).value()->name(), "contains_answer");
}

TEST(RewardSelector, ErrorsNameTheReward) {
  const auto selector = RewardSelector::Create(Plugin(FAILING_PLUGIN_PATH)).value();
  const absl::Status status = selector->Score(FromSource("")).status();
  EXPECT_THAT(status.message(), HasSubstr("failing: "));
}

TEST(RewardSelector, BadSpecsAreClearErrors) {
  RewardSpec both = Named("gsm8k");
  both.plugin = "x.so";
  EXPECT_THAT(RewardSelector::Create(both).status().message(),
              HasSubstr("not both"));
  EXPECT_THAT(RewardSelector::Create(Named("nope")).status().message(),
              HasSubstr("unknown reward 'nope'"));
  EXPECT_EQ(RewardSelector::Create(Plugin("/nonexistent.so")).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace rollout::rewards
