// `rollout train` with trainer.mode=sft end to end on the CPU: generated arithmetic
// pairs, the tiny Qwen2 fixture, a few optimizer steps through a worker process, and a
// validation loss that falls.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

testing::CommandResult RolloutIn(const std::string& dir, const std::vector<std::string>& args) {
  const std::string command =
      absl::StrCat("cd '", dir, "' && '", ROLLOUT_BINARY_PATH, "' ", absl::StrJoin(args, " "));
  return testing::RunCommand({"/bin/sh", "-c", command}, 600);
}

TEST(SftTrain, ValidationLossFallsOverAFewSteps) {
  testing::TempDir dir("sft_e2e");
  ASSERT_EQ(RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data", "--train", "512", "--val", "32"}).exit_code, 0);
  const std::string source = ROLLOUT_SOURCE_DIR;
  const testing::CommandResult train = RolloutIn(
      dir.path(), {"train", source + "/recipes/sft_tiny.yaml", "data.train_files=[data/sft_train.jsonl]",
                   "data.val_files=[data/sft_val.jsonl]", "actor.model.path=" + source + "/tests/data/tiny-qwen2",
                   "trainer.total_training_steps=20", "trainer.test_freq=10"});
  ASSERT_EQ(train.exit_code, 0) << train.output;
  std::ifstream in(dir.Path("jsonl_log/rollout_demo/sft_arith/metrics.jsonl"));
  std::vector<nlohmann::json> steps;
  for (std::string line; std::getline(in, line);) steps.push_back(nlohmann::json::parse(line));
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

}  // namespace
}  // namespace rollout
