// How the PPO step scores responses: reward functions see a row's extra_info as verl's
// reward loop extends it; DAPO's overlong shaping measures a response by what its
// attention covers, so a multi-turn response's tool turns count, as verl measures it.
#include "controller/step_scores.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace rollout::controller {
namespace {

// Scores every sample 1 and keeps what it was asked.
class RecordingRunner : public rewards::RewardRunner {
 public:
  absl::StatusOr<std::vector<rewards::ScoredSample>> Score(const std::vector<rewards::RewardInput>& samples) override {
    inputs = samples;
    std::vector<rewards::ScoredSample> scored(samples.size());
    for (rewards::ScoredSample& sample : scored) sample.output.score = 1;
    return scored;
  }
  std::vector<rewards::RewardInput> inputs;
};

TEST(ScoreWithRewardRunner, ExtendsExtraInfoAsVerlsRewardLoopDoes) {
  PromptExample example;
  example.extra_info = R"({"index":7,"num_turns":"theirs"})";
  const std::vector<const PromptExample*> examples = {&example};
  std::map<std::string, double> metrics;
  RecordingRunner runner;

  Batch single_turn;
  ASSERT_TRUE(single_turn.AddStrings("response_text", {"a", "b"}).ok());
  ASSERT_TRUE(ScoreWithRewardRunner(runner, single_turn, examples, 2, &metrics).ok());
  ASSERT_EQ(runner.inputs.size(), 2u);
  EXPECT_EQ(runner.inputs[1].extra_info, R"({"index":7,"num_turns":2,"rollout_reward_scores":{}})");

  Batch multi_turn = single_turn;
  ASSERT_TRUE(multi_turn.AddTensor("num_turns", at::tensor({4, 2}, at::kLong)).ok());
  ASSERT_TRUE(multi_turn.AddStrings("tool_rewards", {"[0.0,-0.05]", "[]"}).ok());
  ASSERT_TRUE(multi_turn.AddStrings("turn_scores", {"[0.0,1.0]", "[]"}).ok());
  ASSERT_TRUE(ScoreWithRewardRunner(runner, multi_turn, examples, 2, &metrics).ok());
  EXPECT_EQ(runner.inputs[0].extra_info,
            R"({"index":7,"num_turns":4,"turn_scores":[0.0,1.0],"tool_rewards":[0.0,-0.05],"rollout_reward_scores":{}})");
  EXPECT_EQ(runner.inputs[1].extra_info,
            R"({"index":7,"num_turns":2,"turn_scores":[],"tool_rewards":[],"rollout_reward_scores":{}})");
  EXPECT_EQ(metrics["reward/errors"], 0);
}

config::Recipe OverlongRecipe() {
  config::Recipe recipe;
  recipe.mutable_data()->set_max_response_length(8);
  config::OverlongBufferConfig& buffer = *recipe.mutable_reward()->mutable_overlong_buffer();
  buffer.set_enable(true);
  buffer.set_len(4);
  buffer.set_penalty_factor(1.0);
  return recipe;
}

TEST(ShapeOverlong, CountsEveryTokenTheResponseAttendsToToolTurnsIncluded) {
  // Row 0: 2 tokens. Row 1: 6 tokens (a tool turn among them): 2 past the 4 free ones.
  const at::Tensor attention = at::tensor({1, 1, 0, 0, 0, 0, 0, 0,  //
                                           1, 1, 1, 1, 1, 1, 0, 0},
                                          at::kLong)
                                   .view({2, 8});
  std::map<std::string, double> metrics;
  const std::vector<double> shaped = ShapeOverlong(OverlongRecipe(), {1.0, 1.0}, attention, &metrics).value();
  ASSERT_EQ(shaped.size(), 2u);
  EXPECT_DOUBLE_EQ(shaped[0], 1.0);
  EXPECT_DOUBLE_EQ(shaped[1], 0.5);  // penalty -(6 - 4) / 4
  EXPECT_DOUBLE_EQ(metrics.at("reward/overlong_fraction"), 0.5);
  EXPECT_DOUBLE_EQ(metrics.at("reward/overlong_penalty/mean"), -0.25);
}

TEST(ShapeOverlong, LeavesScoresAsTheyAreWhenTheBufferIsOff) {
  config::Recipe recipe = OverlongRecipe();
  recipe.mutable_reward()->mutable_overlong_buffer()->set_enable(false);
  std::map<std::string, double> metrics;
  EXPECT_EQ(ShapeOverlong(recipe, {0.25}, at::ones({1, 8}, at::kLong), &metrics).value(), std::vector<double>{0.25});
  EXPECT_TRUE(metrics.empty());
}

}  // namespace
}  // namespace rollout::controller
