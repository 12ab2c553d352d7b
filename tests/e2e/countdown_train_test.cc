// recipes/grpo_countdown.yaml end to end on the CPU (its documented fallback) at a
// reduced size: generated countdown problems, the tiny Qwen2 fixture, two GRPO steps.
// The countdown reward scores every response (TinyZero's 0 / 0.1 / 1, no errors) and
// validation reports its accuracy as the core metric.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using testing::ReadJsonLines;
using testing::RolloutIn;

TEST(CountdownTrain, TwoGrpoStepsOnTheCpuScoreWithTheCountdownReward) {
  testing::TempDir dir("countdown_e2e");
  const testing::CommandResult data =
      RolloutIn(dir.path(), {"gen-data", "countdown", "--out", "data", "--train", "16", "--val", "4"});
  ASSERT_EQ(data.exit_code, 0) << data.output;
  const std::string source = ROLLOUT_SOURCE_DIR;
  const testing::CommandResult train = RolloutIn(
      dir.path(),
      {"train", source + "/recipes/grpo_countdown.yaml", "data.train_files=[data/train.jsonl]",
       "data.val_files=[data/val.jsonl]", "actor.model.path=" + source + "/tests/data/tiny-qwen2",
       "trainer.device=cpu", "actor.model.dtype=float32", "rollout.dtype=float32",
       "trainer.total_training_steps=2", "data.train_batch_size=4", "actor.ppo_mini_batch_size=4",
       "actor.ppo_micro_batch_size_per_gpu=8", "rollout.n=2", "rollout.cpu_kv_cache_gib=0.05",
       "data.max_response_length=16"});
  ASSERT_EQ(train.exit_code, 0) << train.output;
  EXPECT_THAT(train.output, ::testing::HasSubstr("step 2/2"));

  const auto steps = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/grpo_countdown/metrics.jsonl"));
  ASSERT_EQ(steps.size(), 3u);  // validation before training, then two steps
  // The countdown reward reports acc, which verl makes the core validation metric.
  EXPECT_TRUE(steps[0].contains("val-core/countdown/acc/mean@1")) << steps[0].dump();
  EXPECT_TRUE(steps[0].contains("val-aux/countdown/reward/mean@1")) << steps[0].dump();
  EXPECT_TRUE(steps[2].contains("val-core/countdown/acc/mean@1")) << steps[2].dump();  // the last step
  for (int step = 1; step <= 2; ++step) {
    const nlohmann::json& metrics = steps[static_cast<size_t>(step)];
    for (const char* name : {"timing_s/gen", "timing_s/reward", "timing_s/ref", "timing_s/update_actor",
                             "actor/pg_loss", "actor/kl_loss", "actor/grad_norm", "critic/score/mean",
                             "critic/score/min", "critic/score/max", "response_length/mean"}) {
      ASSERT_TRUE(metrics.contains(name)) << "step " << step << " lacks " << name;
    }
    // Every ground truth parsed and every response scored: 0, 0.1 (format) or 1.
    EXPECT_EQ(metrics["reward/errors"], 0) << metrics.dump();
    EXPECT_EQ(metrics["reward/timeouts"], 0) << metrics.dump();
    EXPECT_GE(metrics["critic/score/min"].get<double>(), 0) << metrics.dump();
    EXPECT_LE(metrics["critic/score/max"].get<double>(), 1) << metrics.dump();
    EXPECT_LE(metrics["response_length/mean"].get<double>(), 16) << metrics.dump();
  }
}

}  // namespace
}  // namespace rollout
