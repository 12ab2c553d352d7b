// verl's DAPO dynamic sampling (algorithm.filter_groups) through `rollout train` on the
// CPU: steps generate rounds of data.gen_batch_size prompts until data.train_batch_size
// prompts whose responses differ are kept, and a metric that never differs stops the
// run after algorithm.filter_groups.max_num_gen_batches rounds. The example reward
// plug-in reports each response's length in characters ("response_chars"), which
// differs between random responses, and scores containing the answer, which they never
// do here.
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

std::vector<std::string> TrainArgs(const std::string& metric) {
  const std::string source = ROLLOUT_SOURCE_DIR;
  return {"train", source + "/recipes/grpo_arith.yaml", "data.train_files=[data/train.jsonl]", "data.val_files=[]",
          "actor.model.path=" + source + "/tests/data/tiny-qwen2", "trainer.device=cpu",
          "trainer.total_training_steps=2", "trainer.val_before_train=false", "trainer.test_freq=-1",
          "trainer.save_freq=-1", "trainer.logger=[console,jsonl]", "reward.name=null", "reward.plugin=" EXAMPLE_PLUGIN_PATH,
          "data.train_batch_size=4", "data.gen_batch_size=3", "actor.ppo_mini_batch_size=4",
          "actor.ppo_micro_batch_size_per_gpu=4", "rollout.n=2", "rollout.cpu_kv_cache_gib=0.05",
          "data.max_response_length=8", "algorithm.filter_groups.enable=true",
          "algorithm.filter_groups.metric=" + metric, "algorithm.filter_groups.max_num_gen_batches=3"};
}

// data/train.jsonl of 64 two-digit problems.
void WriteArithmeticData(const testing::TempDir& dir) {
  const testing::CommandResult data =
      RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data", "--train", "64", "--val", "8"});
  ASSERT_EQ(data.exit_code, 0) << data.output;
}

TEST(DynamicSampling, StepsGenerateRoundsUntilTheirPromptsDiffer) {
  testing::TempDir dir("dynamic_sampling");
  ASSERT_NO_FATAL_FAILURE(WriteArithmeticData(dir));
  const testing::CommandResult train = RolloutIn(dir.path(), TrainArgs("response_chars"));
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const auto steps = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/grpo_arith/metrics.jsonl"));
  ASSERT_EQ(steps.size(), 2u);
  for (const nlohmann::json& metrics : steps) {
    // 3 prompts a round: at least two rounds for the step's 4.
    EXPECT_GE(metrics["train/num_gen_batches"].get<double>(), 2) << metrics.dump();
    EXPECT_TRUE(metrics.contains("actor/pg_loss")) << metrics.dump();
    EXPECT_GT(metrics["timing_s/gen"].get<double>(), 0);
  }
}

TEST(DynamicSampling, AMetricThatNeverDiffersStopsAfterTheRoundLimit) {
  testing::TempDir dir("dynamic_sampling_stuck");
  ASSERT_NO_FATAL_FAILURE(WriteArithmeticData(dir));
  const testing::CommandResult train = RolloutIn(dir.path(), TrainArgs("score"));
  EXPECT_NE(train.exit_code, 0);
  EXPECT_THAT(train.output, HasSubstr("step 1: after 3 generation rounds (algorithm.filter_groups.max_num_gen_batches) only "));
  EXPECT_THAT(train.output, HasSubstr("have responses that differ in score: the data are too easy or too hard"));
}

}  // namespace
}  // namespace rollout
