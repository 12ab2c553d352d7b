// verl's generation dumps end to end on the CPU: trainer.rollout_data_dir gets each
// training step's responses and trainer.validation_data_dir each validation's, as
// <dir>/<step>.jsonl with verl's keys, and trainer.log_val_generations shows a few on
// the console, through real worker processes (grpo_arith, the tiny Qwen2 fixture, the
// example reward plug-in for its extra value).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using testing::ReadJsonLines;
using testing::RolloutIn;

TEST(GenerationDumps, TrainingStepsAndValidationsWriteVerlsJsonLines) {
  testing::TempDir dir("generation_dumps");
  ASSERT_EQ(RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data", "--train", "16", "--val", "3"}).exit_code, 0);
  const std::string source = ROLLOUT_SOURCE_DIR;
  const testing::CommandResult train = RolloutIn(
      dir.path(),
      {"train", source + "/recipes/grpo_arith.yaml", "data.train_files=[data/train.jsonl]",
       "data.val_files=[data/val.jsonl]", "actor.model.path=" + source + "/tests/data/tiny-qwen2",
       "trainer.device=cpu", "trainer.total_training_steps=2", "trainer.test_freq=-1",
       "trainer.logger=[console,jsonl]", "data.train_batch_size=4", "actor.ppo_mini_batch_size=4",
       "actor.ppo_micro_batch_size_per_gpu=4", "rollout.n=2", "rollout.val_kwargs.n=2",
       "rollout.cpu_kv_cache_gib=0.05", "data.max_response_length=8", "reward.name=null",
       "reward.plugin=" EXAMPLE_PLUGIN_PATH, "trainer.rollout_data_dir=dumps/rollout",
       "trainer.validation_data_dir=dumps/val", "trainer.log_val_generations=2"});
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const absl::StatusOr<std::vector<std::string>> rollout_files = ListDirectory(dir.Path("dumps/rollout"));
  ASSERT_TRUE(rollout_files.ok()) << rollout_files.status();
  EXPECT_THAT(*rollout_files, ::testing::ElementsAre("1.jsonl", "2.jsonl"));
  // Validation before training (step 0) and after the last step.
  const absl::StatusOr<std::vector<std::string>> val_files = ListDirectory(dir.Path("dumps/val"));
  ASSERT_TRUE(val_files.ok()) << val_files.status();
  EXPECT_THAT(*val_files, ::testing::ElementsAre("0.jsonl", "2.jsonl"));

  const auto metrics = testing::StepMetrics(dir.path(), "grpo_arith");
  for (int step = 1; step <= 2; ++step) {
    const auto lines = ReadJsonLines(dir.Path(absl::StrCat("dumps/rollout/", step, ".jsonl")));
    ASSERT_EQ(lines.size(), 8u);  // 4 prompts x 2 responses
    double score_sum = 0;
    for (const nlohmann::json& line : lines) {
      std::vector<std::string> keys;
      for (const auto& item : line.items()) keys.push_back(item.key());
      EXPECT_THAT(keys, ::testing::UnorderedElementsAre("input", "output", "gts", "score", "step", "response_chars"));
      EXPECT_EQ(line["step"], step);
      // The plug-in scores 1 when the response contains the ground truth.
      const bool contains = line["output"].get<std::string>().find(line["gts"].get<std::string>()) != std::string::npos;
      EXPECT_EQ(line["score"], contains ? 1.0 : 0.0) << line.dump();
      score_sum += line["score"].get<double>();
    }
    EXPECT_DOUBLE_EQ(score_sum / 8, metrics.at(step)["critic/score/mean"].get<double>());
    EXPECT_TRUE(metrics.at(step).contains("timing_s/dump_rollout_generations"));
  }

  // trainer.log_val_generations: two responses under each validation's step, the same
  // prompts both times.
  std::map<std::string, std::vector<std::string>> shown;  // heading -> its inputs
  const std::vector<std::string> output_lines = absl::StrSplit(train.output, '\n');
  for (size_t i = 0; i < output_lines.size(); ++i) {
    if (!absl::StartsWith(output_lines[i], "validation generations at step ")) continue;
    for (size_t j = i + 1; j < output_lines.size() && absl::StartsWith(output_lines[j], "  score "); ++j) {
      const std::string& line = output_lines[j];
      const size_t input = line.find("| input \"");
      ASSERT_NE(input, std::string::npos) << line;
      shown[output_lines[i]].push_back(line.substr(input, line.find("\" | output", input) - input));
    }
  }
  const std::string at0 = "validation generations at step 0 (trainer.log_val_generations):";
  const std::string at2 = "validation generations at step 2 (trainer.log_val_generations):";
  ASSERT_EQ(shown.size(), 2u) << train.output;
  EXPECT_EQ(shown[at0].size(), 2u) << train.output;
  EXPECT_EQ(shown[at0], shown[at2]) << train.output;

  const auto val_rows = ReadJsonLines(dir.Path("data/val.jsonl"));
  for (const char* file : {"dumps/val/0.jsonl", "dumps/val/2.jsonl"}) {
    const auto lines = ReadJsonLines(dir.Path(file));
    ASSERT_EQ(lines.size(), 6u) << file;  // 3 prompts x val_kwargs.n 2, in the data's order
    for (size_t row = 0; row < lines.size(); ++row) {
      const nlohmann::json& prompt = val_rows[row / 2];
      EXPECT_EQ(lines[row]["input"], prompt["prompt"]) << file;  // a text prompt, no template
      EXPECT_EQ(lines[row]["gts"], prompt["ground_truth"]) << file;
    }
  }
}

}  // namespace
}  // namespace rollout
