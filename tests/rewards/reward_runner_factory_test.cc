// The recipe's reward section picks the runner: threads by default, helper processes
// with isolation: process, a RewardService with remote.
#include "rewards/reward_runner_factory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rollout::rewards {
namespace {

using ::testing::HasSubstr;

std::vector<RewardInput> OneGsm8kSample(const std::string& response) {
  std::vector<RewardInput> samples(1);
  samples[0].data_source = "openai/gsm8k";
  samples[0].response = response;
  samples[0].ground_truth = "42";
  return samples;
}

TEST(CreateRewardRunner, DefaultsToThreadsRoutingByDataSource) {
  auto runner = CreateRewardRunner(config::RewardConfig()).value();
  const std::vector<ScoredSample> results = runner->Score(OneGsm8kSample("so #### 42")).value();
  EXPECT_EQ(results[0].output.score, 1.0);
  EXPECT_EQ(results[0].output.extra.at("acc"), 1.0);
}

TEST(CreateRewardRunner, ProcessIsolationSurvivesACrash) {
  config::RewardConfig reward;
  reward.set_isolation("process");
  reward.set_plugin(MISBEHAVING_PLUGIN_PATH);
  reward.set_num_workers(1);
  auto runner = CreateRewardRunner(reward, ROLLOUT_BINARY_PATH).value();
  const std::vector<ScoredSample> results = runner->Score(OneGsm8kSample("segfault")).value();
  EXPECT_EQ(results[0].outcome, SampleOutcome::kError);
  EXPECT_EQ(runner->Score(OneGsm8kSample("42")).value()[0].output.score, 1.0);
}

TEST(CreateRewardRunner, RemoteWithALocalRewardIsAnError) {
  config::RewardConfig reward;
  reward.set_remote("127.0.0.1:50051");
  reward.set_name("gsm8k");
  const absl::Status status = CreateRewardRunner(reward).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("drop reward.name / reward.plugin"));
}

TEST(CreateRewardRunner, UnknownRewardNameIsAnError) {
  config::RewardConfig reward;
  reward.set_name("gsm9k");
  EXPECT_THAT(CreateRewardRunner(reward).status().message(), HasSubstr("unknown reward 'gsm9k'"));
}

}  // namespace
}  // namespace rollout::rewards
