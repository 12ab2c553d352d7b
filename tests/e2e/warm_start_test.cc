// recipes/grpo_arith_tiny.yaml (the default demo) end to end on the CPU at reduced
// size: `rollout init-model` makes the model, an SFT warm start runs on the same
// workers as GRPO, logs as its own experiment, and changes the weights GRPO starts
// from; the run ends by printing validation after the warm start against after GRPO.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using testing::MakeAdditionData;
using testing::ReadJsonLines;
using testing::RolloutIn;

TEST(WarmStartDemo, SftWarmStartThenGrpoOnTheSameWorkers) {
  testing::TempDir dir("warm_start_e2e");
  ASSERT_EQ(MakeAdditionData(dir.path(), 256, 16), 0);
  const std::string source = ROLLOUT_SOURCE_DIR;
  ASSERT_EQ(RolloutIn(dir.path(), {"init-model", "--preset", "tiny", "--tokenizer", source + "/tests/data/tiny-qwen2",
                                   "--out", "outputs/tiny_init"})
                .exit_code,
            0);
  const testing::CommandResult train = RolloutIn(
      dir.path(), {"train", source + "/recipes/grpo_arith_tiny.yaml", "sft_warm_start.total_training_steps=6",
                   "sft_warm_start.test_freq=3", "sft_warm_start.stop_val_loss=0", "sft_warm_start.train_batch_size=32",
                   "sft_warm_start.optim.lr=1e-2", "sft_warm_start.optim.lr_warmup_steps=0",
                   "trainer.total_training_steps=2", "data.train_batch_size=4",
                   "actor.ppo_mini_batch_size=4", "rollout.n=2"});
  ASSERT_EQ(train.exit_code, 0) << train.output;

  const std::vector<nlohmann::json> sft =
      ReadJsonLines(dir.Path("jsonl_log/rollout_demo/grpo_arith_tiny_sft_warm_start/metrics.jsonl"));
  ASSERT_EQ(sft.size(), 7u) << train.output;  // validation before, then six steps
  const double before = sft[0]["val/loss"];
  const double after = sft[6]["val/loss"];
  EXPECT_LT(after, 0.8 * before) << train.output;
  EXPECT_TRUE(sft[3].contains("val/loss"));

  const std::vector<nlohmann::json> grpo = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/grpo_arith_tiny/metrics.jsonl"));
  ASSERT_EQ(grpo.size(), 3u) << train.output;  // validation after the warm start, then two steps
  EXPECT_TRUE(grpo[0].contains("val-core/arithmetic/reward/mean@1"));
  EXPECT_TRUE(grpo[2].contains("val-core/arithmetic/reward/mean@1"));
  EXPECT_TRUE(grpo[1].contains("actor/pg_loss"));
  EXPECT_THAT(train.output, ::testing::HasSubstr("SFT warm start: 6 steps"));
  EXPECT_THAT(train.output,
              ::testing::ContainsRegex("after the SFT warm start .step 0. -> after training\n"
                                       "  val-core/arithmetic/reward/mean@1 +[0-9.]+ .step 0. -> [0-9.]+ .step 2."));
}

TEST(WarmStartDemo, WarmStartEndsAtTheValidationLossThreshold) {
  testing::TempDir dir("warm_start_e2e_threshold");
  const std::string source = ROLLOUT_SOURCE_DIR;
  ASSERT_EQ(MakeAdditionData(dir.path(), 64, 8), 0);
  // Any loss is below 1000: the warm start ends at its first validation, step 3 of 12.
  const testing::CommandResult train = RolloutIn(
      dir.path(), {"train", source + "/recipes/grpo_arith_tiny.yaml", "actor.model.path=" + source + "/tests/data/tiny-qwen2",
                   "sft_warm_start.total_training_steps=12", "sft_warm_start.test_freq=3",
                   "sft_warm_start.stop_val_loss=1000", "sft_warm_start.train_batch_size=16",
                   "trainer.total_training_steps=1", "data.train_batch_size=4", "actor.ppo_mini_batch_size=4",
                   "rollout.n=2"});
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const std::vector<nlohmann::json> sft =
      ReadJsonLines(dir.Path("jsonl_log/rollout_demo/grpo_arith_tiny_sft_warm_start/metrics.jsonl"));
  ASSERT_EQ(sft.size(), 4u) << train.output;  // validation before, then steps 1-3
  EXPECT_TRUE(sft[3].contains("val/loss"));
  EXPECT_THAT(train.output, ::testing::HasSubstr("at step 3 of 12: the warm start ends here"));
  EXPECT_EQ(ReadJsonLines(dir.Path("jsonl_log/rollout_demo/grpo_arith_tiny/metrics.jsonl")).size(), 2u) << train.output;
}

TEST(WarmStartDemo, StopValLossWithoutValidationIsAClearError) {
  testing::TempDir dir("warm_start_e2e_threshold_bad");
  const std::string source = ROLLOUT_SOURCE_DIR;
  ASSERT_EQ(MakeAdditionData(dir.path(), 64, 8), 0);
  const testing::CommandResult train =
      RolloutIn(dir.path(), {"train", source + "/recipes/grpo_arith_tiny.yaml",
                             "actor.model.path=" + source + "/tests/data/tiny-qwen2", "sft_warm_start.test_freq=-1",
                             "sft_warm_start.stop_val_loss=0.5", "trainer.total_training_steps=1"});
  EXPECT_NE(train.exit_code, 0);
  EXPECT_THAT(train.output, ::testing::HasSubstr("sft_warm_start.stop_val_loss needs validation"));
}

TEST(WarmStartDemo, WarmStartWithoutDataIsAClearError) {
  testing::TempDir dir("warm_start_e2e_bad");
  const std::string source = ROLLOUT_SOURCE_DIR;
  ASSERT_EQ(MakeAdditionData(dir.path(), 64, 8), 0);
  const testing::CommandResult train =
      RolloutIn(dir.path(), {"train", source + "/recipes/grpo_arith_tiny.yaml",
                             "actor.model.path=" + source + "/tests/data/tiny-qwen2", "sft_warm_start.train_files=[]",
                             "trainer.total_training_steps=1"});
  EXPECT_NE(train.exit_code, 0);
  EXPECT_THAT(train.output, ::testing::HasSubstr("sft_warm_start.train_files is empty"));
}

}  // namespace
}  // namespace rollout
