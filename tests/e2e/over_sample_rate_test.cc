// verl's rollout.over_sample_rate end to end on the CPU, through a real worker process
// (grpo_arith, the tiny Qwen2 fixture): each training rollout stops once half its
// samples finished, the rest come back as empty responses that the step scores and
// trains past (response_mask 0), and validation generates every sample.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using testing::ReadJsonLines;
using testing::RolloutIn;

TEST(OverSampleRate, TrainingRolloutsStopOnceEnoughSamplesFinishedAndTrainPastTheAborted) {
  testing::TempDir dir("over_sample_rate");
  ASSERT_EQ(
      RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data", "--train", "16", "--val", "2"}).exit_code, 0);
  // max_num_seqs 2 runs one prompt's group (n = 2) at a time, so the second group's end
  // reaches the target of 4 of 8 and the last two groups are aborted before they start.
  const testing::CommandResult train = testing::RunRecipeOnCpu(
      dir.path(), "grpo_arith.yaml", "data/train.jsonl", "data/val.jsonl", 2,
      {"trainer.test_freq=2", "data.train_batch_size=4", "actor.ppo_mini_batch_size=4",
       "actor.ppo_micro_batch_size_per_gpu=4", "rollout.n=2", "rollout.cpu_kv_cache_gib=0.05",
       "data.max_response_length=8", "rollout.max_num_seqs=2", "actor_rollout_ref.rollout.over_sample_rate=0.5",
       "trainer.rollout_data_dir=dumps"});
  ASSERT_EQ(train.exit_code, 0) << train.output;

  // Both training rollouts stopped early; the validations (before training and at step
  // 2) generated every sample.
  const std::string aborted = "generate_sequences: 4 of 8 samples aborted, empty (rollout.over_sample_rate 0.5)";
  size_t times = 0;
  for (size_t at = train.output.find(aborted); at != std::string::npos; at = train.output.find(aborted, at + 1)) {
    ++times;
  }
  EXPECT_EQ(times, 2u) << train.output;

  const auto metrics = testing::StepMetrics(dir.path(), "grpo_arith");
  for (int step = 1; step <= 2; ++step) {
    const auto lines = ReadJsonLines(dir.Path(absl::StrCat("dumps/", step, ".jsonl")));
    ASSERT_EQ(lines.size(), 8u);  // 4 prompts x 2 responses, prompt-major
    for (size_t row = 4; row < 8; ++row) EXPECT_EQ(lines[row]["output"], "") << "step " << step << " row " << row;
    const nlohmann::json& at = metrics.at(step);
    EXPECT_EQ(at["response_length/min"].get<double>(), 0.0) << at.dump();
    EXPECT_GT(at["response_length/max"].get<double>(), 0.0) << at.dump();
    EXPECT_TRUE(std::isfinite(at["actor/pg_loss"].get<double>())) << at.dump();
    EXPECT_TRUE(std::isfinite(at["actor/entropy"].get<double>())) << at.dump();
  }
  EXPECT_TRUE(metrics.at(2).contains("val-core/arithmetic/reward/mean@1")) << metrics.at(2).dump();
}

}  // namespace
}  // namespace rollout
