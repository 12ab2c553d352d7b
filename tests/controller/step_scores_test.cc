// DAPO's overlong shaping as the PPO step applies it: a response's length is what its
// attention covers, so a multi-turn response's tool turns count, as verl measures it.
#include "controller/step_scores.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace rollout::controller {
namespace {

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
