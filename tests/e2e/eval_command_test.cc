// `rollout eval` (trainer.val_only) end to end on the CPU through real worker
// processes: it validates the checkpoint a run left (or the initial weights) once,
// logs the metrics as its own experiment, and trains, saves and deletes nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using testing::ReadJsonLines;
using testing::RolloutIn;
using ::testing::HasSubstr;

std::vector<std::string> GrpoArith(const std::string& command, std::vector<std::string> overrides) {
  const std::string source = ROLLOUT_SOURCE_DIR;
  std::vector<std::string> args = {
      command, source + "/recipes/grpo_arith.yaml", "data.train_files=[data/train.jsonl]",
      "data.val_files=[data/val.jsonl]", "actor.model.path=" + source + "/tests/data/tiny-qwen2",
      "trainer.device=cpu", "trainer.total_training_steps=2", "trainer.test_freq=-1",
      "trainer.logger=[console,jsonl]", "data.train_batch_size=4", "actor.ppo_mini_batch_size=4",
      "actor.ppo_micro_batch_size_per_gpu=4", "rollout.n=2", "rollout.val_kwargs.n=2",
      "rollout.cpu_kv_cache_gib=0.05", "data.max_response_length=8"};
  args.insert(args.end(), overrides.begin(), overrides.end());
  return args;
}

TEST(EvalCommand, ValidatesTheLatestCheckpointAndKeepsIt) {
  testing::TempDir dir("eval_checkpoint");
  ASSERT_EQ(RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data", "--train", "16", "--val", "4"}).exit_code, 0);
  const testing::CommandResult train = RolloutIn(dir.path(), GrpoArith("train", {"trainer.save_freq=2"}));
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const std::string run_dir = dir.Path("checkpoints/rollout_demo/grpo_arith");
  const absl::StatusOr<std::string> recipe_before = ReadFile(run_dir + "/resolved_recipe.yaml");
  ASSERT_TRUE(recipe_before.ok()) << recipe_before.status();
  const auto training_log = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/grpo_arith/metrics.jsonl"));

  const testing::CommandResult eval =
      RolloutIn(dir.path(), GrpoArith("eval", {"trainer.del_local_ckpt_after_load=true"}));
  ASSERT_EQ(eval.exit_code, 0) << eval.output;
  EXPECT_THAT(eval.output, HasSubstr("validation only (trainer.val_only): the checkpoint of step 2"));
  EXPECT_THAT(eval.output, HasSubstr("rollout eval: note: trainer.del_local_ckpt_after_load is not applied"));
  EXPECT_THAT(train.output, HasSubstr("roles actor+ref+rollout\n"));
  EXPECT_THAT(eval.output, HasSubstr("roles actor+rollout\n"));  // no reference copy to load
  const auto eval_log = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/grpo_arith_val_only/metrics.jsonl"));
  ASSERT_EQ(eval_log.size(), 1u);
  EXPECT_EQ(eval_log[0]["step"], 2);
  // The same weights and validation seeds as the run's validation after its last step.
  ASSERT_EQ(training_log.back()["step"], 2);
  for (const char* name : {"val-core/arithmetic/reward/mean@2", "val-core/arithmetic/reward/best@2/mean",
                           "val-core/arithmetic/reward/maj@2/mean"}) {
    ASSERT_TRUE(eval_log[0].contains(name)) << eval_log[0].dump();
    EXPECT_EQ(eval_log[0][name], training_log.back()[name]) << name;
  }
  // Nothing trained, saved or deleted: the run's checkpoint, recipe and log are as they were.
  const absl::StatusOr<std::vector<std::string>> entries = ListDirectory(run_dir);
  ASSERT_TRUE(entries.ok()) << entries.status();
  EXPECT_THAT(*entries, ::testing::Contains("global_step_2"));
  EXPECT_THAT(*entries, ::testing::Not(::testing::Contains("global_step_3")));
  EXPECT_EQ(ReadFile(run_dir + "/resolved_recipe.yaml").value(), *recipe_before);
  EXPECT_EQ(ReadJsonLines(dir.Path("jsonl_log/rollout_demo/grpo_arith/metrics.jsonl")).size(), training_log.size());
}

// A PPO run's checkpoint holds a critic; validating it starts neither the critic nor the
// reference: the actor, from the checkpoint, and the rollout alone.
TEST(EvalCommand, APpoCheckpointValidatesWithTheActorAndTheRolloutAlone) {
  testing::TempDir dir("eval_ppo");
  ASSERT_EQ(RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data/arith", "--train", "32", "--val", "4"})
                .exit_code,
            0);
  const std::string source = ROLLOUT_SOURCE_DIR;
  const auto ppo = [&](const std::string& command) {
    return std::vector<std::string>{command, source + "/recipes/ppo_arith_tiny.yaml",
                                    "actor.model.path=" + source + "/tests/data/tiny-qwen2",
                                    "trainer.total_training_steps=2", "trainer.save_freq=2", "trainer.test_freq=-1"};
  };
  const testing::CommandResult train = RolloutIn(dir.path(), ppo("train"));
  ASSERT_EQ(train.exit_code, 0) << train.output;
  EXPECT_THAT(train.output, HasSubstr("roles actor+critic+ref+rollout\n"));
  const testing::CommandResult eval = RolloutIn(dir.path(), ppo("eval"));
  ASSERT_EQ(eval.exit_code, 0) << eval.output;
  EXPECT_THAT(eval.output, HasSubstr("roles actor+rollout\n"));
  EXPECT_THAT(eval.output, HasSubstr("validation only (trainer.val_only): the checkpoint of step 2"));
  const auto training_log = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/ppo_arith/metrics.jsonl"));
  const auto eval_log = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/ppo_arith_val_only/metrics.jsonl"));
  ASSERT_EQ(eval_log.size(), 1u);
  ASSERT_TRUE(eval_log[0].contains("val-core/arithmetic/reward/mean@1")) << eval_log[0].dump();
  EXPECT_EQ(eval_log[0]["val-core/arithmetic/reward/mean@1"], training_log.back()["val-core/arithmetic/reward/mean@1"]);
}

TEST(EvalCommand, WithoutACheckpointItValidatesTheInitialWeights) {
  testing::TempDir dir("eval_initial");
  ASSERT_EQ(RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data", "--train", "16", "--val", "4"}).exit_code, 0);
  const testing::CommandResult eval = RolloutIn(dir.path(), GrpoArith("eval", {}));
  ASSERT_EQ(eval.exit_code, 0) << eval.output;
  EXPECT_THAT(eval.output, HasSubstr("the initial weights (actor.model.path)"));
  const auto eval_log = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/grpo_arith_val_only/metrics.jsonl"));
  ASSERT_EQ(eval_log.size(), 1u);
  EXPECT_EQ(eval_log[0]["step"], 0);
  EXPECT_TRUE(eval_log[0].contains("val-core/arithmetic/reward/mean@2")) << eval_log[0].dump();
  // No checkpoint directory, no resolved recipe.
  EXPECT_EQ(ListDirectory(dir.Path("checkpoints")).status().code(), absl::StatusCode::kNotFound);
}

TEST(EvalCommand, WithoutValidationDataItStopsBeforeAnyWorkerStarts) {
  testing::TempDir dir("eval_no_val");
  ASSERT_EQ(RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data", "--train", "16", "--val", "4"}).exit_code, 0);
  const testing::CommandResult eval = RolloutIn(dir.path(), GrpoArith("eval", {"data.val_files=[]"}));
  EXPECT_EQ(eval.exit_code, 1) << eval.output;
  EXPECT_THAT(eval.output,
              HasSubstr("rollout eval: trainer.val_only needs validation data: data.val_files is empty"));
  EXPECT_THAT(eval.output, ::testing::Not(HasSubstr("pre-flight:")));
}

TEST(EvalCommand, AnSftRecipeReportsItsValidationLoss) {
  testing::TempDir dir("eval_sft");
  ASSERT_EQ(RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data", "--train", "64", "--val", "8"}).exit_code, 0);
  const std::string source = ROLLOUT_SOURCE_DIR;
  const testing::CommandResult eval = RolloutIn(
      dir.path(), {"eval", source + "/recipes/sft_tiny.yaml", "data.train_files=[data/sft_train.jsonl]",
                   "data.val_files=[data/sft_val.jsonl]", "actor.model.path=" + source + "/tests/data/tiny-qwen2"});
  ASSERT_EQ(eval.exit_code, 0) << eval.output;
  const auto eval_log = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/sft_arith_val_only/metrics.jsonl"));
  ASSERT_EQ(eval_log.size(), 1u);
  EXPECT_EQ(eval_log[0]["step"], 0);
  // The random model's loss on arithmetic answers (SftTrain's starting point, ~6.2).
  EXPECT_GT(eval_log[0]["val/loss"].get<double>(), 3.0) << eval_log[0].dump();
  EXPECT_FALSE(eval_log[0].contains("train/loss"));
}

}  // namespace
}  // namespace rollout
