// verl's two optimizer configs in recipes: its Megatron one (McoreOptimizerConfig) loads
// and picks Megatron's learning-rate schedule; a recipe mixing it with the FSDP one's
// schedule is refused, naming both keys; a printed recipe keeps the family it had.
#include "common/lr_schedule_family.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/recipe_loader.h"
#include "tests/support/temp_dir.h"

namespace rollout::config {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// actor.optim of verl's _generated_ppo_megatron_trainer.yaml, with a cosine decay.
const char kVerlMegatronOptim[] =
    "actor_rollout_ref:\n"
    "  actor:\n"
    "    optim:\n"
    "      _target_: verl.workers.config.McoreOptimizerConfig\n"
    "      lr: 1.0e-06\n"
    "      lr_warmup_steps_ratio: 0.0\n"
    "      total_training_steps: -1\n"
    "      weight_decay: 0.01\n"
    "      lr_warmup_steps: -1\n"
    "      betas: [0.9, 0.999]\n"
    "      clip_grad: 1.0\n"
    "      optimizer: adam\n"
    "      lr_warmup_init: 0.0\n"
    "      lr_decay_steps: null\n"
    "      lr_decay_style: cosine\n"
    "      min_lr: 1.0e-07\n"
    "      weight_decay_incr_style: constant\n"
    "      lr_wsd_decay_style: exponential\n"
    "      lr_wsd_decay_steps: null\n"
    "      use_checkpoint_opt_param_scheduler: false\n"
    "      override_optimizer_config: {}\n";

class LrScheduleFamily : public ::testing::Test {
 protected:
  absl::StatusOr<LoadedRecipe> Load(const std::string& text, const std::vector<std::string>& overrides = {}) {
    return LoadRecipe(files_.Write("x.yaml", text), overrides);
  }

  testing::TempDir files_{"lr_schedule_family"};
};

TEST_F(LrScheduleFamily, VerlsMegatronOptimizerConfigLoadsAndPicksMegatronsSchedule) {
  const absl::StatusOr<LoadedRecipe> loaded = Load(kVerlMegatronOptim);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const OptimConfig& optim = loaded->recipe.actor().optim();
  EXPECT_TRUE(UsesMegatronSchedule(optim));
  EXPECT_EQ(optim.lr_decay_style(), "cosine");
  EXPECT_DOUBLE_EQ(optim.min_lr(), 1e-7);
  EXPECT_FALSE(optim.has_lr_decay_steps());  // null: total_training_steps
  EXPECT_FALSE(UsesMegatronSchedule(loaded->recipe.critic().optim()));
  // Megatron's adam decays weights as AdamW does; its weight-decay ramp starts and ends
  // at weight_decay in verl, so every style is accepted.
  EXPECT_TRUE(Load(kVerlMegatronOptim, {"actor_rollout_ref.actor.optim.weight_decay_incr_style=linear"}).ok());
  EXPECT_THAT(Load(kVerlMegatronOptim, {"actor_rollout_ref.actor.optim.use_checkpoint_opt_param_scheduler=true"})
                  .status()
                  .message(),
              HasSubstr("use_checkpoint_opt_param_scheduler"));
}

TEST_F(LrScheduleFamily, MixingMegatronsScheduleWithFsdpsIsRefusedNamingBoth) {
  const absl::StatusOr<LoadedRecipe> mixed =
      Load("actor:\n  optim:\n    warmup_style: cosine\n", {"actor_rollout_ref.actor.optim.lr_decay_style=linear"});
  EXPECT_THAT(mixed.status().message(),
              AllOf(HasSubstr("'actor.optim.lr_decay_style' at command line"),
                    HasSubstr("'actor.optim.warmup_style' at "), HasSubstr("x.yaml:3"),
                    HasSubstr("write lr_decay_style")));
  // FSDP's keys at their defaults (a verl FSDP dump's) do not mix anything in.
  EXPECT_TRUE(Load("critic:\n  optim: {warmup_style: constant, min_lr_ratio: 0.0, num_cycles: 0.5, min_lr: 0.0}\n")
                  .ok());
}

// The printed (resolved) recipe writes unset keys that have no default as null, so
// reading it back keeps them unset: the schedule family and actor.data_loader_seed
// (unset: trainer.seed) survive the round trip.
TEST_F(LrScheduleFamily, APrintedRecipeKeepsItsScheduleFamily) {
  const absl::StatusOr<LoadedRecipe> fsdp = Load("actor:\n  optim: {warmup_style: cosine}\n");
  ASSERT_TRUE(fsdp.ok()) << fsdp.status();
  const std::string printed = RecipeToYaml(fsdp->recipe);
  EXPECT_THAT(printed, AllOf(HasSubstr("    lr_decay_style: null\n"), HasSubstr("    min_lr: null\n"),
                             HasSubstr("  data_loader_seed: null\n")));
  const absl::StatusOr<LoadedRecipe> fsdp_again = Load(printed);
  ASSERT_TRUE(fsdp_again.ok()) << fsdp_again.status();
  EXPECT_FALSE(UsesMegatronSchedule(fsdp_again->recipe.actor().optim()));
  EXPECT_FALSE(fsdp_again->recipe.actor().has_data_loader_seed());

  const absl::StatusOr<LoadedRecipe> megatron = Load(kVerlMegatronOptim);
  ASSERT_TRUE(megatron.ok()) << megatron.status();
  const absl::StatusOr<LoadedRecipe> megatron_again = Load(RecipeToYaml(megatron->recipe));
  ASSERT_TRUE(megatron_again.ok()) << megatron_again.status();
  EXPECT_TRUE(UsesMegatronSchedule(megatron_again->recipe.actor().optim()));
  EXPECT_FALSE(megatron_again->recipe.actor().optim().has_lr_decay_steps());
}

}  // namespace
}  // namespace rollout::config
