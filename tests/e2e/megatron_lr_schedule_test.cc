// verl's Megatron optimizer keys end to end on the CPU, through a real worker process
// (grpo_arith, the tiny Qwen2 fixture): the actor's learning rate of each step follows
// Megatron's linear decay from optim.lr to optim.min_lr over the run.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using testing::RolloutIn;

TEST(MegatronLrSchedule, TheActorsLearningRateFollowsMegatronsLinearDecay) {
  testing::TempDir dir("megatron_lr_schedule");
  ASSERT_EQ(RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data", "--train", "8", "--val", "2"}).exit_code,
            0);
  const testing::CommandResult train = testing::RunRecipeOnCpu(
      dir.path(), "grpo_arith.yaml", "data/train.jsonl", "data/val.jsonl", 3,
      {"trainer.test_freq=-1", "trainer.val_before_train=false", "data.train_batch_size=2",
       "actor.ppo_mini_batch_size=2", "actor.ppo_micro_batch_size_per_gpu=4", "rollout.n=2",
       "rollout.cpu_kv_cache_gib=0.05", "data.max_response_length=4", "actor_rollout_ref.actor.optim.lr=1e-5",
       "actor_rollout_ref.actor.optim.lr_decay_style=linear", "actor_rollout_ref.actor.optim.min_lr=1e-6",
       "actor_rollout_ref.actor.optim.optimizer=adam"});
  ASSERT_EQ(train.exit_code, 0) << train.output;

  // Megatron's get_lr with 3 decay steps (total_training_steps) and no warmup: the
  // update of step s runs at min_lr + (lr - min_lr) x (1 - (s - 1) / 3).
  const auto metrics = testing::StepMetrics(dir.path(), "grpo_arith");
  const double expected[] = {1e-5, 7e-6, 4e-6};
  for (int step = 1; step <= 3; ++step) {
    EXPECT_NEAR(metrics.at(step)["actor/lr"].get<double>(), expected[step - 1], 1e-12) << metrics.at(step).dump();
  }
}

}  // namespace
}  // namespace rollout
