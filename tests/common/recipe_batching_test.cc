// Each pass's micro-batches from a recipe: rows, or a token budget where the pass's own
// switch (use_dynamic_bsz, log_prob_use_dynamic_bsz) is on.
#include "common/recipe_batching.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/recipe_loader.h"
#include "tests/support/temp_dir.h"

namespace rollout::config {
namespace {

Recipe Load(const std::vector<std::string>& overrides) {
  testing::TempDir dir("recipe_batching");
  const std::string path = dir.Write("r.yaml", "actor:\n  ppo_micro_batch_size_per_gpu: 4\n");
  absl::StatusOr<LoadedRecipe> loaded = LoadRecipe(path, overrides);
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  return loaded.ok() ? loaded->recipe : Recipe();
}

TEST(RecipeBatching, WithoutDynamicBatchSizesEveryPassCountsRows) {
  const Recipe recipe = Load({"rollout.log_prob_micro_batch_size_per_gpu=6", "ref.log_prob_micro_batch_size_per_gpu=7"});
  EXPECT_EQ(UpdateActorBatching(recipe).rows, 4);
  EXPECT_EQ(OldLogProbBatching(recipe).rows, 6);
  EXPECT_EQ(RefLogProbBatching(recipe).rows, 7);
  EXPECT_EQ(CriticValuesBatching(recipe).rows, 8);  // its own default, not the update's
  for (const PassBatching& pass : {UpdateActorBatching(recipe), UpdateCriticBatching(recipe),
                                   CriticValuesBatching(recipe), OldLogProbBatching(recipe),
                                   RefLogProbBatching(recipe)}) {
    EXPECT_EQ(pass.max_tokens, 0) << pass.budget_key;
  }
}

TEST(RecipeBatching, EachPassHasItsOwnSwitchAndBudget) {
  const Recipe actor_only = Load({"actor.use_dynamic_bsz=true", "actor.ppo_max_token_len_per_gpu=3000"});
  EXPECT_EQ(UpdateActorBatching(actor_only).max_tokens, 3000);
  // Unset, the other passes' switches follow the actor's, as in verl; the log-prob
  // passes take its budget too, the critic keeps its own (common/verl_default_links.h).
  EXPECT_EQ(OldLogProbBatching(actor_only).max_tokens, 3000);
  EXPECT_EQ(RefLogProbBatching(actor_only).max_tokens, 3000);
  EXPECT_EQ(UpdateCriticBatching(actor_only).max_tokens, 32768);
  EXPECT_EQ(CriticValuesBatching(actor_only).max_tokens, 32768);
  const Recipe actor_alone = Load({"actor.use_dynamic_bsz=true", "rollout.log_prob_use_dynamic_bsz=false",
                                   "ref.log_prob_use_dynamic_bsz=false", "critic.use_dynamic_bsz=false"});
  EXPECT_EQ(OldLogProbBatching(actor_alone).max_tokens, 0);
  EXPECT_EQ(RefLogProbBatching(actor_alone).max_tokens, 0);
  EXPECT_EQ(UpdateCriticBatching(actor_alone).max_tokens, 0);
  EXPECT_EQ(CriticValuesBatching(actor_alone).max_tokens, 0);

  const Recipe all = Load({"rollout.log_prob_use_dynamic_bsz=true", "rollout.log_prob_max_token_len_per_gpu=5000",
                           "ref.log_prob_use_dynamic_bsz=true", "critic.use_dynamic_bsz=true"});
  EXPECT_EQ(UpdateActorBatching(all).max_tokens, 0);
  EXPECT_EQ(OldLogProbBatching(all).max_tokens, 5000);
  EXPECT_EQ(OldLogProbBatching(all).budget_key, "rollout.log_prob_max_token_len_per_gpu");
  EXPECT_EQ(RefLogProbBatching(all).max_tokens, 16384);  // verl's default budgets
  EXPECT_EQ(RefLogProbBatching(all).budget_key, "ref.log_prob_max_token_len_per_gpu");
  EXPECT_EQ(UpdateCriticBatching(all).max_tokens, 32768);
  // critic.use_dynamic_bsz switches the critic's values pass too, with its own budget.
  EXPECT_EQ(CriticValuesBatching(all).max_tokens, 32768);
  EXPECT_EQ(CriticValuesBatching(all).budget_key, "critic.forward_max_token_len_per_gpu");
  const Recipe critic = Load({"critic.use_dynamic_bsz=true", "critic.forward_max_token_len_per_gpu=900",
                              "critic.forward_micro_batch_size_per_gpu=3"});
  EXPECT_EQ(CriticValuesBatching(critic).max_tokens, 900);
  EXPECT_EQ(CriticValuesBatching(critic).rows, 3);
  EXPECT_EQ(UpdateCriticBatching(critic).max_tokens, 32768);
}

}  // namespace
}  // namespace rollout::config
