// Which rows the old-log-prob pass may leave to the update: each rank's share of the
// first mini-batch, only while that mini-batch is trained before any optimizer step and
// nothing needs the old log-probs earlier.
#include "controller/ppo_worker_calls.h"

#include <gtest/gtest.h>

#include <string>

namespace rollout::controller {
namespace {

config::Recipe RecipeYaml(const std::string& yaml) {
  absl::StatusOr<config::LoadedRecipe> recipe = config::ParseRecipeYaml(yaml, "test.yaml");
  EXPECT_TRUE(recipe.ok()) << recipe.status();
  return recipe.ok() ? recipe->recipe : config::Recipe();
}

// A GRPO recipe of 8 prompts x 3 samples and mini-batches of 4 prompts, with `algorithm`
// and `actor` keys added.
config::Recipe Grpo(const std::string& algorithm = "", const std::string& actor = "") {
  return RecipeYaml("algorithm: {adv_estimator: grpo" + algorithm + "}\ndata: {train_batch_size: 8}\n" +
                    "actor: {ppo_mini_batch_size: 4" + actor + "}\nrollout: {n: 3}\n");
}

TEST(OnPolicyRowsPerRank, TheRanksShareOfTheFirstMiniBatch) {
  EXPECT_EQ(OnPolicyRowsPerRank(Grpo(), 1), 12);  // 4 prompts x 3 samples
  EXPECT_EQ(OnPolicyRowsPerRank(Grpo(), 2), 6);
}

TEST(OnPolicyRowsPerRank, NoneWhenOldLogProbsAreNeededBeforeTheUpdateOrComeFromTheRollout) {
  EXPECT_EQ(OnPolicyRowsPerRank(Grpo(", use_kl_in_reward: true"), 1), 0);
  EXPECT_EQ(OnPolicyRowsPerRank(Grpo("", ", ppo_epochs: 2"), 1), 0);
  EXPECT_EQ(OnPolicyRowsPerRank(Grpo(", rollout_correction: {bypass_mode: true}"), 1), 0);
  EXPECT_EQ(OnPolicyRowsPerRank(Grpo("", ", calculate_sum_pi_squared: true"), 1), 0);
}

}  // namespace
}  // namespace rollout::controller
