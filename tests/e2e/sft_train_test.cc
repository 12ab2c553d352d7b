// `rollout train` with trainer.mode=sft end to end on the CPU: generated arithmetic
// pairs (and multi-turn conversations), the tiny Qwen2 fixture, a
// few optimizer steps through a worker process, and a validation loss that falls.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using testing::ReadJsonLines;
using testing::RolloutIn;

TEST(SftTrain, ValidationLossFallsOverAFewSteps) {
  testing::TempDir dir("sft_e2e");
  ASSERT_EQ(RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data", "--train", "512", "--val", "32"}).exit_code, 0);
  const std::string source = ROLLOUT_SOURCE_DIR;
  const testing::CommandResult train = RolloutIn(
      dir.path(), {"train", source + "/recipes/sft_tiny.yaml", "data.train_files=[data/sft_train.jsonl]",
                   "data.val_files=[data/sft_val.jsonl]", "actor.model.path=" + source + "/tests/data/tiny-qwen2",
                   "trainer.total_training_steps=20", "trainer.test_freq=10"});
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const std::vector<nlohmann::json> steps = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/sft_arith/metrics.jsonl"));
  ASSERT_EQ(steps.size(), 21u);  // validation before training, then twenty steps
  const double before = steps[0]["val/loss"];
  const double after = steps[20]["val/loss"];
  EXPECT_LT(after, 0.8 * before) << train.output;  // 6.2 -> ~4.0 on this data
  EXPECT_TRUE(steps[10].contains("val/loss"));
  EXPECT_FALSE(steps[9].contains("val/loss"));
  EXPECT_THAT(train.output, ::testing::HasSubstr("val_loss "));
  for (const char* name : {"train/loss", "train/grad_norm", "train/lr", "timing_s/step"}) {
    EXPECT_TRUE(steps[1].contains(name)) << name;
  }
}

// Two workers (trainer.n_gpus_per_node=2) train like one. Their optimizer state is
// sharded (workers/optimizer_shards.h): each steps its share of the tensors and sends it
// to the other, so both hold the weights one worker would, up to the rounding of their
// gradient sums. Each validates its half of the rows, so a worker left with stale
// weights would move the validation loss by tenths (0.30 when the owners send nothing).
TEST(SftTrain, TwoWorkersTrainLikeOne) {
  testing::TempDir dir("sft_e2e_two");
  ASSERT_EQ(
      RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data", "--train", "256", "--val", "32"}).exit_code, 0);
  const std::string source = ROLLOUT_SOURCE_DIR;
  std::vector<std::vector<nlohmann::json>> runs;
  for (int workers : {1, 2}) {
    const std::string name = absl::StrCat("workers_", workers);
    const testing::CommandResult train = RolloutIn(
        dir.path(), {"train", source + "/recipes/sft_tiny.yaml", "data.train_files=[data/sft_train.jsonl]",
                     "data.val_files=[data/sft_val.jsonl]", "actor.model.path=" + source + "/tests/data/tiny-qwen2",
                     "trainer.total_training_steps=8", "trainer.test_freq=8", "trainer.experiment_name=" + name,
                     absl::StrCat("trainer.n_gpus_per_node=", workers), "actor.ppo_micro_batch_size_per_gpu=32"});
    ASSERT_EQ(train.exit_code, 0) << train.output;
    runs.push_back(ReadJsonLines(dir.Path("jsonl_log/rollout_demo/" + name + "/metrics.jsonl")));
    ASSERT_EQ(runs.back().size(), 9u);  // validation before training, then eight steps
  }
  const double before = runs[0][0]["val/loss"], one = runs[0][8]["val/loss"], two = runs[1][8]["val/loss"];
  EXPECT_LT(one, before - 0.5);  // the check below can tell a stale worker
  EXPECT_NEAR(two, one, 0.02) << "validation loss of one worker " << one << ", of two " << two;
}

// Two-question arithmetic conversations (verl's multi-turn SFT rows) as JSON lines.
std::string ConversationRows(int first, int count) {
  std::string rows;
  for (int i = first; i < first + count; ++i) {
    const int a = i % 10, b = (i / 10) % 10, c = (i * 7) % 10;
    absl::StrAppend(&rows, R"({"messages": [{"role": "user", "content": ")", a, "+", b,
                    R"(="}, {"role": "assistant", "content": ")", a + b, R"("}, {"role": "user", "content": "and +)",
                    c, R"(?"}, {"role": "assistant", "content": ")", a + b + c, "\"}]}\n");
  }
  return rows;
}

// `rollout train` of recipes/sft_tiny.yaml on conversation files (data.multiturn.enable,
// prompts of up to 32 tokens, responses of 48) with the tiny fixture, then `overrides`.
testing::CommandResult TrainOnConversations(const testing::TempDir& dir, const std::string& train_file,
                                            const std::string& val_file, const std::vector<std::string>& overrides) {
  const std::string source = ROLLOUT_SOURCE_DIR;
  std::vector<std::string> args = {"train", source + "/recipes/sft_tiny.yaml", "data.train_files=[" + train_file + "]",
                                   "data.val_files=[" + val_file + "]", "data.multiturn.enable=true",
                                   "data.max_prompt_length=32", "data.max_response_length=48",
                                   "actor.model.path=" + source + "/tests/data/tiny-qwen2"};
  args.insert(args.end(), overrides.begin(), overrides.end());
  return RolloutIn(dir.path(), args);
}

// data.multiturn.enable: each conversation trains on both of its replies.
TEST(SftTrain, MultiTurnConversationsTrainOnTheirReplies) {
  testing::TempDir dir("sft_multiturn");
  const std::string train_file = dir.Write("chats_train.jsonl", ConversationRows(0, 256));
  const std::string val_file = dir.Write("chats_val.jsonl", ConversationRows(300, 32));
  const testing::CommandResult train =
      TrainOnConversations(dir, train_file, val_file, {"trainer.total_training_steps=12", "trainer.test_freq=12"});
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const std::vector<nlohmann::json> steps = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/sft_arith/metrics.jsonl"));
  ASSERT_EQ(steps.size(), 13u) << train.output;
  EXPECT_LT(steps[12]["val/loss"].get<double>(), 0.8 * steps[0]["val/loss"].get<double>()) << train.output;
}

// verl's data.train_max_samples / val_max_samples: 16 of 64 training rows (a seeded
// choice, data.shuffle being on) make two steps of 8 in the one epoch, and 4 of 16
// validation rows are scored.
TEST(SftTrain, MaxSamplesCapTheRowsRead) {
  testing::TempDir dir("sft_max_samples");
  const std::string train_file = dir.Write("chats_train.jsonl", ConversationRows(0, 64));
  const std::string val_file = dir.Write("chats_val.jsonl", ConversationRows(300, 16));
  const testing::CommandResult train =
      TrainOnConversations(dir, train_file, val_file,
                           {"data.train_batch_size=8", "actor.ppo_micro_batch_size_per_gpu=8",
                            "data.train_max_samples=16", "data.val_max_samples=4"});
  ASSERT_EQ(train.exit_code, 0) << train.output;
  EXPECT_THAT(train.output, ::testing::HasSubstr("kept 16 of the 64 training rows"));
  EXPECT_THAT(train.output, ::testing::HasSubstr("kept 4 of the 16 validation rows"));
  const std::vector<nlohmann::json> steps = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/sft_arith/metrics.jsonl"));
  ASSERT_EQ(steps.size(), 3u) << train.output;  // validation before training, then two steps
  EXPECT_EQ(steps[2]["training/epoch"].get<int>(), 0) << steps[2].dump();
}

// verl's SFT trainer bounds a row as a whole (data.max_length): the same conversations
// then train as they do under the two lengths, step for step, and a row longer than it is
// refused by name.
TEST(SftTrain, VerlsMaxLengthTrainsWholeRowsAsTheTwoLengthsDo) {
  testing::TempDir dir("sft_max_length");
  const std::string source = ROLLOUT_SOURCE_DIR;
  const std::string train_file = dir.Write("chats_train.jsonl", ConversationRows(0, 64));
  const std::string val_file = dir.Write("chats_val.jsonl", ConversationRows(300, 16));
  const auto run = [&](const std::string& name, const std::vector<std::string>& lengths) {
    std::vector<std::string> args = {"train", source + "/recipes/sft_tiny.yaml", "data.train_files=[" + train_file + "]",
                                     "data.val_files=[" + val_file + "]", "data.multiturn.enable=true",
                                     "actor.model.path=" + source + "/tests/data/tiny-qwen2",
                                     "trainer.total_training_steps=4", "trainer.test_freq=4",
                                     "trainer.experiment_name=" + name};
    args.insert(args.end(), lengths.begin(), lengths.end());
    return RolloutIn(dir.path(), args);
  };
  const testing::CommandResult parts = run("parts", {"data.max_prompt_length=32", "data.max_response_length=48"});
  ASSERT_EQ(parts.exit_code, 0) << parts.output;
  const testing::CommandResult whole = run("whole", {"data.max_length=80"});
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  const std::vector<nlohmann::json> by_parts = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/parts/metrics.jsonl"));
  const std::vector<nlohmann::json> by_rows = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/whole/metrics.jsonl"));
  ASSERT_EQ(by_parts.size(), 5u);
  ASSERT_EQ(by_rows.size(), 5u);
  for (const size_t step : {0, 4}) {
    EXPECT_NEAR(by_rows[step]["val/loss"].get<double>(), by_parts[step]["val/loss"].get<double>(), 1e-3) << step;
  }
  for (size_t step = 1; step <= 4; ++step) {
    EXPECT_NEAR(by_rows[step]["train/loss"].get<double>(), by_parts[step]["train/loss"].get<double>(), 1e-3) << step;
  }
  const testing::CommandResult too_short = run("too_short", {"data.max_length=16"});
  EXPECT_NE(too_short.exit_code, 0);
  EXPECT_THAT(too_short.output, ::testing::HasSubstr("tokens, more than data.max_length (16); raise it, or set "
                                                      "data.truncation to cut it"));
}

}  // namespace
}  // namespace rollout
