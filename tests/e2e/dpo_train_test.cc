// `rollout train` with trainer.mode=dpo end to end on the CPU: generated preference
// pairs (as they are, and as TRL's conversational rows), the tiny Qwen2 fixture and its
// frozen copy as the reference; the validation loss starts at log 2 (policy ==
// reference) and falls, the pairs get separated.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using testing::ReadJsonLines;
using testing::RolloutIn;

TEST(DpoTrain, PreferencesAreLearnedAgainstTheFrozenReference) {
  testing::TempDir dir("dpo_e2e");
  ASSERT_EQ(RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data", "--train", "512", "--val", "32"}).exit_code, 0);
  const std::string source = ROLLOUT_SOURCE_DIR;
  const testing::CommandResult train = RolloutIn(
      dir.path(), {"train", source + "/recipes/dpo_tiny.yaml", "data.train_files=[data/dpo_train.jsonl]",
                   "data.val_files=[data/dpo_val.jsonl]", "actor.model.path=" + source + "/tests/data/tiny-qwen2",
                   "trainer.total_training_steps=16", "trainer.test_freq=8"});
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const std::vector<nlohmann::json> steps = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/dpo_arith/metrics.jsonl"));
  ASSERT_EQ(steps.size(), 17u);  // validation before training, then sixteen steps
  EXPECT_NEAR(steps[0]["val/loss"].get<double>(), std::log(2.0), 1e-4);  // policy == reference
  // Held-out pairs: on this data the loss falls by ~0.006 in 16 steps (0.6931 -> 0.6866).
  EXPECT_LT(steps[16]["val/loss"].get<double>(), std::log(2.0) - 0.003) << train.output;
  EXPECT_GT(steps[16]["val/rewards/margins"].get<double>(), 0);
  for (const char* name : {"train/loss", "train/rewards/accuracies", "train/grad_norm", "train/lr"}) {
    EXPECT_TRUE(steps[1].contains(name)) << name;
  }
}

// The generated pairs in `from` as TRL's conversational rows with an implicit prompt:
// chosen and rejected whole chats that begin with the same user message.
void WriteConversationalPairs(const std::string& from, const std::string& to) {
  std::ofstream out(to);
  for (const nlohmann::json& row : ReadJsonLines(from)) {
    const nlohmann::json user = {{"role", "user"}, {"content", row["prompt"]}};
    nlohmann::json conversational;
    for (const char* side : {"chosen", "rejected"}) {
      conversational[side] = nlohmann::json::array({user, {{"role", "assistant"}, {"content", row[side]}}});
    }
    out << conversational.dump() << "\n";
  }
}

TEST(DpoTrain, TrlsConversationalPairsAreLearnedToo) {
  testing::TempDir dir("dpo_chat_e2e");
  ASSERT_EQ(RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data", "--train", "512", "--val", "32"}).exit_code, 0);
  WriteConversationalPairs(dir.Path("data/dpo_train.jsonl"), dir.Path("chat_train.jsonl"));
  WriteConversationalPairs(dir.Path("data/dpo_val.jsonl"), dir.Path("chat_val.jsonl"));
  const std::string source = ROLLOUT_SOURCE_DIR;
  const testing::CommandResult train = RolloutIn(
      dir.path(), {"train", source + "/recipes/dpo_tiny.yaml", "data.train_files=[chat_train.jsonl]",
                   "data.val_files=[chat_val.jsonl]", "actor.model.path=" + source + "/tests/data/tiny-qwen2",
                   "data.max_prompt_length=48", "data.max_response_length=16", "trainer.total_training_steps=8",
                   "trainer.test_freq=8"});
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const std::vector<nlohmann::json> steps = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/dpo_arith/metrics.jsonl"));
  ASSERT_EQ(steps.size(), 9u) << train.output;
  EXPECT_NEAR(steps[0]["val/loss"].get<double>(), std::log(2.0), 1e-4);
  // 0.6931 -> ~0.679 on this data (the recipe's large learning rate makes later steps noisy).
  EXPECT_LT(steps[8]["val/loss"].get<double>(), std::log(2.0) - 0.005) << train.output;
  EXPECT_GT(steps[8]["val/rewards/margins"].get<double>(), 0);
}

// recipes/dpo_ultrafeedback_qwen2.5_0.5b.yaml, a GPU recipe, on the CPU at reduced size:
// trl-lib/ultrafeedback_binarized's Parquet layout (implicit prompts), only paths, the
// device, dtype and sizes changed.
TEST(DpoTrain, TheUltrafeedbackRecipeTrainsOnTrlsRowsOnTheCpu) {
  testing::TempDir dir("dpo_recipe_e2e");
  const std::string parquet = std::string(ROLLOUT_SOURCE_DIR) + "/tests/data/parquet/trl_preferences.parquet";
  const testing::CommandResult train =
      testing::RunRecipeOnCpu(dir.path(), "dpo_ultrafeedback_qwen2.5_0.5b.yaml", parquet, parquet, 2,
                              {"data.train_batch_size=2", "actor.ppo_micro_batch_size_per_gpu=2"});
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const std::vector<nlohmann::json> steps =
      ReadJsonLines(dir.Path("jsonl_log/rollout_ultrafeedback/dpo_qwen2.5_0.5b/metrics.jsonl"));
  ASSERT_EQ(steps.size(), 3u) << train.output;  // validation before training, then two steps
  EXPECT_NEAR(steps[0]["val/loss"].get<double>(), std::log(2.0), 1e-4);
  for (const char* name : {"train/loss", "train/rewards/accuracies", "train/rewards/margins"}) {
    EXPECT_TRUE(steps[1].contains(name)) << name;
  }
}

}  // namespace
}  // namespace rollout
