// recipes/grpo_gsm8k_qwen2.5_0.5b.yaml (and sft_gsm8k_qwen2.5_0.5b.yaml), GPU recipes, run on the CPU at reduced size
// through real worker processes: the tiny Qwen2 fixture for the model,
// tests/data/gsm8k_tiny.jsonl (verl's gsm8k rows: chat prompts, reward_model.ground_truth,
// data_source openai/gsm8k) to train on and tests/data/parquet/gsm8k_verl.parquet (the
// same layout, as verl's preprocessing writes it) to validate on, everything else as the
// recipe says.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using testing::ReadJsonLines;
using testing::RolloutIn;

using ::testing::HasSubstr;

const std::string& Recipe() {
  static const std::string* const path =
      new std::string(std::string(ROLLOUT_SOURCE_DIR) + "/recipes/grpo_gsm8k_qwen2.5_0.5b.yaml");
  return *path;
}

TEST(Gsm8kRecipe, TrainsTwoStepsOnTheCpuScoredByTheGsm8kReward) {
  testing::TempDir dir("gsm8k_recipe_e2e");
  const std::string source = ROLLOUT_SOURCE_DIR;
  const std::string data = source + "/tests/data/gsm8k_tiny.jsonl";
  const std::string parquet = source + "/tests/data/parquet/gsm8k_verl.parquet";
  // Only paths, the device, dtypes and sizes change (the lengths to fit the fixture's 512
  // positions); the recipe's algorithm (GRPO, KL loss, clip ratios, data_source reward
  // routing) stays as written.
  const testing::CommandResult train = testing::RunRecipeOnCpu(
      dir.path(), "grpo_gsm8k_qwen2.5_0.5b.yaml", data, parquet, 2,
      {"rollout.dtype=float32", "rollout.cpu_kv_cache_gib=0.05", "data.train_batch_size=4", "data.val_batch_size=0",
       "actor.ppo_mini_batch_size=2", "actor.ppo_micro_batch_size_per_gpu=2", "rollout.n=2",
       "data.max_prompt_length=256", "data.max_response_length=8", "trainer.test_freq=2"});
  ASSERT_EQ(train.exit_code, 0) << train.output;
  EXPECT_THAT(train.output, HasSubstr("step 2/2"));

  const auto steps = ReadJsonLines(dir.Path("jsonl_log/rollout_gsm8k/grpo_qwen2.5_0.5b/metrics.jsonl"));
  ASSERT_EQ(steps.size(), 3u);  // validation before training, then two steps
  // data_source openai/gsm8k chose the gsm8k reward, which reports acc: acc is then the
  // core validation variable and the reward an auxiliary one (verl's rule).
  EXPECT_TRUE(steps[0].contains("val-core/openai/gsm8k/acc/mean@1")) << steps[0].dump();
  EXPECT_TRUE(steps[0].contains("val-aux/openai/gsm8k/reward/mean@1")) << steps[0].dump();
  for (int step = 1; step <= 2; ++step) {
    const nlohmann::json& metrics = steps[static_cast<size_t>(step)];
    EXPECT_EQ(metrics["step"], step);
    for (const char* name : {"timing_s/gen", "timing_s/reward", "timing_s/old_log_prob", "timing_s/ref",
                             "timing_s/adv", "timing_s/update_actor", "timing_s/step", "perf/throughput",
                             "actor/kl_loss", "actor/grad_norm"}) {
      EXPECT_TRUE(metrics.contains(name)) << "step " << step << " lacks " << name;
    }
    EXPECT_EQ(metrics["reward/errors"], 0) << metrics.dump();
    EXPECT_EQ(metrics["reward/timeouts"], 0) << metrics.dump();
    // Chat prompts rendered with the template and verl's instruction: the shortest
    // question alone has 66 bytes, so at most 66 tokens; rendered, it has 95.
    EXPECT_GT(metrics["prompt_length/min"].get<double>(), 80) << metrics.dump();
    EXPECT_EQ(metrics["response_length/mean"], 8) << metrics.dump();  // random weights never stop
  }
  EXPECT_TRUE(steps[2].contains("val-core/openai/gsm8k/acc/mean@1"));  // the last step validates
}

// recipes/sft_gsm8k_qwen2.5_0.5b.yaml the same way: verl's gsm8k Parquet rows, their
// extra_info question and answer, only paths, the device, dtype and sizes changed.
TEST(Gsm8kRecipe, TheSftRecipeTrainsOnVerlsRowsOnTheCpu) {
  testing::TempDir dir("gsm8k_sft_recipe_e2e");
  const std::string parquet = std::string(ROLLOUT_SOURCE_DIR) + "/tests/data/parquet/gsm8k_verl.parquet";
  const testing::CommandResult train = testing::RunRecipeOnCpu(dir.path(), "sft_gsm8k_qwen2.5_0.5b.yaml", parquet,
                                                               parquet, 2, {"data.train_batch_size=3"});
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const auto steps = ReadJsonLines(dir.Path("jsonl_log/rollout_gsm8k/sft_qwen2.5_0.5b/metrics.jsonl"));
  ASSERT_EQ(steps.size(), 3u) << train.output;  // validation before training, then two steps
  for (const char* name : {"train/loss", "train/lr", "train/grad_norm"}) {
    EXPECT_TRUE(steps[1].contains(name)) << name;
  }
  EXPECT_TRUE(steps[2].contains("val/loss"));  // the last step validates
}

TEST(Gsm8kRecipe, WithoutTheUsersDataItNamesTheFileItLooksFor) {
  testing::TempDir dir("gsm8k_recipe_no_data");
  const testing::CommandResult train = RolloutIn(dir.path(), {"train", Recipe(), "trainer.device=cpu"});
  EXPECT_NE(train.exit_code, 0);
  EXPECT_THAT(train.output, HasSubstr("data/gsm8k/train.parquet: No such file or directory"));
}

}  // namespace
}  // namespace rollout
