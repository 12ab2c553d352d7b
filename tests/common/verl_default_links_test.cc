// verl's defaults that follow another key: unset, the critic's mini-batch, epochs,
// shuffling, loss aggregation and token budgets are the actor's, the log-prob passes
// batch by tokens when the actor's update does, and the reward model's budget is the
// critic's; a key the recipe writes (a file, a command line, verl's printed config)
// keeps its value, and null brings the link back.
#include "common/verl_default_links.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/recipe_loader.h"
#include "tests/support/temp_dir.h"

namespace rollout::config {
namespace {

Recipe Load(const std::string& yaml) {
  absl::StatusOr<LoadedRecipe> loaded = ParseRecipeYaml(yaml, "links.yaml");
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  return loaded.ok() ? loaded->recipe : Recipe();
}

TEST(VerlDefaultLinks, TheCriticFollowsTheActorUnlessSet) {
  const Recipe recipe = Load(
      "actor: {ppo_mini_batch_size: 8, ppo_epochs: 2, shuffle: true, loss_agg_mode: seq-mean-token-mean}\n");
  EXPECT_EQ(recipe.critic().ppo_mini_batch_size(), 8);
  EXPECT_EQ(recipe.critic().ppo_epochs(), 2);
  EXPECT_TRUE(recipe.critic().shuffle());
  EXPECT_EQ(recipe.critic().loss_agg_mode(), "seq-mean-token-mean");
  const Recipe set = Load("actor: {ppo_mini_batch_size: 8}\ncritic: {ppo_mini_batch_size: 4}\n");
  EXPECT_EQ(set.critic().ppo_mini_batch_size(), 4);
  EXPECT_EQ(Load("actor: {ppo_mini_batch_size: 8}\ncritic: {ppo_mini_batch_size: null}\n").critic().ppo_mini_batch_size(),
            8);
  EXPECT_EQ(Load("trainer: {device: cpu}\n").critic().ppo_mini_batch_size(), 256);  // the actor's default
}

TEST(VerlDefaultLinks, TokenBudgetsFollowTheActorsUpdateAndTheCriticsThroughChains) {
  const Recipe recipe =
      Load("actor: {use_dynamic_bsz: true, ppo_max_token_len_per_gpu: 3000, ppo_micro_batch_size_per_gpu: 2}\n"
           "critic: {ppo_max_token_len_per_gpu: 12288, ppo_micro_batch_size_per_gpu: 4}\n"
           "ref: {log_prob_max_token_len_per_gpu: 5000}\n");
  EXPECT_TRUE(recipe.rollout().log_prob_use_dynamic_bsz());
  EXPECT_EQ(recipe.rollout().log_prob_max_token_len_per_gpu(), 3000);
  EXPECT_TRUE(recipe.ref().log_prob_use_dynamic_bsz());
  EXPECT_EQ(recipe.ref().log_prob_max_token_len_per_gpu(), 5000);  // written: kept
  EXPECT_TRUE(recipe.critic().use_dynamic_bsz());
  EXPECT_EQ(recipe.critic().forward_micro_batch_size_per_gpu(), 4);
  EXPECT_EQ(recipe.critic().forward_max_token_len_per_gpu(), 12288);
  EXPECT_TRUE(recipe.reward_model().use_dynamic_bsz());
  EXPECT_EQ(recipe.reward_model().forward_max_token_len_per_gpu(), 12288);
  const Recipe plain = Load("trainer: {device: cpu}\n");
  EXPECT_FALSE(plain.rollout().log_prob_use_dynamic_bsz());
  EXPECT_EQ(plain.critic().forward_max_token_len_per_gpu(), 32768);
}

// A command line's spelling is a written key too, whichever spelling it uses.
TEST(VerlDefaultLinks, VerlsSpellingsOnTheCommandLineCountAsWritten) {
  testing::TempDir files("verl_default_links");
  const absl::StatusOr<LoadedRecipe> loaded =
      LoadRecipe(files.Write("r.yaml", "actor: {ppo_mini_batch_size: 8}\n"),
                 {"actor_rollout_ref.actor.use_dynamic_bsz=true",
                  "actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=false"});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_FALSE(loaded->recipe.rollout().log_prob_use_dynamic_bsz());
  EXPECT_TRUE(loaded->recipe.ref().log_prob_use_dynamic_bsz());
}

}  // namespace
}  // namespace rollout::config
