// recipes/dapo_math_qwen2.5_0.5b.yaml, a GPU recipe, run on the CPU at reduced size
// through real worker processes: the tiny Qwen2 fixture for the model and
// tests/data/dapo_math_tiny.jsonl (DAPO-Math-17k's layout, data_source math_dapo) for
// the data; only paths, the device, dtypes and sizes change. The random model never
// writes an "Answer:" line, so every response scores -1 (math_dapo) and loses 1 more
// to the overlong buffer (it never stops): no prompt's responses differ, and dynamic
// sampling keeps none — the run ends with the data's epoch, saying so. With the filter
// off the same recipe trains.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using testing::ReadJsonLines;
using testing::RolloutIn;
using ::testing::HasSubstr;

std::vector<std::string> ReducedRecipe(std::vector<std::string> overrides) {
  const std::string source = ROLLOUT_SOURCE_DIR;
  const std::string data = source + "/tests/data/dapo_math_tiny.jsonl";
  std::vector<std::string> args = {
      "train", source + "/recipes/dapo_math_qwen2.5_0.5b.yaml", "data.train_files=[" + data + "]",
      "data.val_files=[" + data + "]", "actor.model.path=" + source + "/tests/data/tiny-qwen2",
      "trainer.device=cpu", "actor.model.dtype=float32", "rollout.dtype=float32", "rollout.cpu_kv_cache_gib=0.05",
      "data.train_batch_size=2", "data.gen_batch_size=2", "actor.ppo_mini_batch_size=2",
      "actor.ppo_micro_batch_size_per_gpu=2", "rollout.n=2", "rollout.val_kwargs.n=2",
      "data.max_prompt_length=256", "data.max_response_length=8", "reward.overlong_buffer.len=4",
      "trainer.total_training_steps=2", "trainer.test_freq=-1", "trainer.save_freq=-1",
      "trainer.logger=[console,jsonl]"};
  args.insert(args.end(), overrides.begin(), overrides.end());
  return args;
}

TEST(DapoRecipe, WithAPolicyThatNeverAnswersDynamicSamplingKeepsNothingAndTheEpochEnds) {
  testing::TempDir dir("dapo_recipe");
  const testing::CommandResult train = RolloutIn(dir.path(), ReducedRecipe({}));
  ASSERT_EQ(train.exit_code, 0) << train.output;
  EXPECT_THAT(train.output, HasSubstr("the data's 1 epoch(s) (trainer.total_epochs) ended during step 1 of 2"));
  const auto steps = ReadJsonLines(dir.Path("jsonl_log/rollout_dapo/dapo_qwen2.5_0.5b/metrics.jsonl"));
  ASSERT_EQ(steps.size(), 1u);  // the validation before training only
  // math_dapo reports acc: the core validation variable; every response wrong.
  EXPECT_EQ(steps[0]["val-core/math_dapo/acc/mean@2"], 0) << steps[0].dump();
  EXPECT_EQ(steps[0]["val-aux/math_dapo/reward/mean@2"], -1) << steps[0].dump();
}

TEST(DapoRecipe, WithoutTheFilterItTrainsScoredByMathDapoAndTheOverlongBuffer) {
  testing::TempDir dir("dapo_recipe_unfiltered");
  const testing::CommandResult train =
      RolloutIn(dir.path(), ReducedRecipe({"algorithm.filter_groups.enable=false", "trainer.val_before_train=false"}));
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const auto steps = ReadJsonLines(dir.Path("jsonl_log/rollout_dapo/dapo_qwen2.5_0.5b/metrics.jsonl"));
  ASSERT_EQ(steps.size(), 2u);
  for (const nlohmann::json& metrics : steps) {
    // -1 from math_dapo and -1 for 8 tokens where the buffer starts at 4 of 8.
    EXPECT_EQ(metrics["critic/score/mean"], -2) << metrics.dump();
    EXPECT_EQ(metrics["reward/overlong_fraction"], 1) << metrics.dump();
    EXPECT_TRUE(metrics.contains("actor/pg_clipfrac")) << metrics.dump();
    EXPECT_FALSE(metrics.contains("actor/kl_loss")) << metrics.dump();  // use_kl_loss: false
  }
}

}  // namespace
}  // namespace rollout
