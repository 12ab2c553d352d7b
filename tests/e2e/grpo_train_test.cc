// `rollout train` end to end on the CPU through real worker processes: generated
// arithmetic data, the tiny Qwen2 fixture, GRPO for three steps with validation and
// DAPO's overlong shaping, and the metrics that come out (verl's names, in the
// JSON-lines log).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using testing::ReadJsonLines;
using testing::RolloutIn;

using ::testing::HasSubstr;

TEST(GrpoTrain, ThreeStepsOnTheCpuLogVerlsMetrics) {
  testing::TempDir dir("grpo_e2e");
  const testing::CommandResult data =
      RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data", "--train", "64", "--val", "8"});
  ASSERT_EQ(data.exit_code, 0) << data.output;
  const std::string source = ROLLOUT_SOURCE_DIR;
  const testing::CommandResult train = RolloutIn(
      dir.path(),
      {"train", source + "/recipes/grpo_arith.yaml", "data.train_files=[data/train.jsonl]",
       "data.val_files=[data/val.jsonl]", "actor.model.path=" + source + "/tests/data/tiny-qwen2",
       "trainer.device=cpu", "trainer.total_training_steps=3", "trainer.test_freq=2",
       "trainer.logger=[console,jsonl]", "data.train_batch_size=4", "actor.ppo_mini_batch_size=2",
       "actor.ppo_micro_batch_size_per_gpu=2", "rollout.n=2", "rollout.cpu_kv_cache_gib=0.05",
       "data.max_response_length=8", "reward.overlong_buffer.enable=true", "reward.overlong_buffer.len=4"});
  ASSERT_EQ(train.exit_code, 0) << train.output;
  EXPECT_THAT(train.output, HasSubstr("step 3/3"));
  EXPECT_THAT(train.output, HasSubstr("critic/score/mean over steps"));  // the reward curve

  const auto steps = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/grpo_arith/metrics.jsonl"));
  ASSERT_EQ(steps.size(), 4u);  // validation before training, then three steps
  EXPECT_EQ(steps[0]["step"], 0);
  EXPECT_TRUE(steps[0].contains("val-core/arithmetic/reward/mean@1"));
  for (int step = 1; step <= 3; ++step) {
    const nlohmann::json& metrics = steps[static_cast<size_t>(step)];
    EXPECT_EQ(metrics["step"], step);
    for (const char* name : {"timing_s/gen", "timing_s/reward", "timing_s/old_log_prob", "timing_s/ref",
                             "timing_s/adv", "timing_s/update_actor", "timing_s/step", "perf/throughput",
                             "actor/pg_loss", "actor/kl_loss", "actor/entropy", "actor/pg_clipfrac",
                             "actor/grad_norm", "actor/lr", "critic/score/mean", "critic/advantages/mean",
                             "response_length/mean", "reward/timeouts", "reward/errors",
                             "reward/overlong_fraction", "reward/overlong_penalty/mean", "perf/cpu_memory_used_gb"}) {
      EXPECT_TRUE(metrics.contains(name)) << "step " << step << " lacks " << name;
    }
    EXPECT_GT(metrics.value("perf/cpu_memory_used_gb", 0.0), 0.0) << "step " << step;
    EXPECT_FALSE(metrics.contains("perf/max_memory_allocated_gb")) << "a CPU run has no CUDA allocator";
  }
  EXPECT_TRUE(steps[2].contains("val-core/arithmetic/reward/mean@1"));  // test_freq 2
  EXPECT_TRUE(steps[3].contains("val-core/arithmetic/reward/mean@1"));  // the last step
  EXPECT_FALSE(steps[1].contains("val-core/arithmetic/reward/mean@1"));
}

// verl's data.filter_overlong_prompts: 4 of 20 training prompts and 1 of 5 validation
// prompts exceed data.max_prompt_length. With the filter they are dropped at start and
// the run is sized by the 16 left (4 steps of 4 prompts, where 20 would make 5); without
// it the first overlong prompt drawn stops the run (data.truncation: error).
TEST(GrpoTrain, OverlongPromptsAreDroppedBeforeTheRunIsSized) {
  testing::TempDir dir("grpo_e2e_overlong");
  const std::vector<std::string> letters = absl::StrSplit(testing::LetterRows(), '\n', absl::SkipEmpty());
  std::vector<std::string> overlong;
  for (int i = 0; i < 4; ++i) {
    overlong.push_back(absl::StrCat("{\"prompt\": \"", std::string(200, 'x'), i,
                                    "=\", \"ground_truth\": \"e\", \"data_source\": \"letters\"}"));
  }
  std::vector<std::string> train_rows(letters.begin(), letters.begin() + 8);
  train_rows.insert(train_rows.end(), overlong.begin(), overlong.end());
  train_rows.insert(train_rows.end(), letters.begin() + 8, letters.end());
  dir.Write("data/train.jsonl", absl::StrJoin(train_rows, "\n") + "\n");
  dir.Write("data/val.jsonl", absl::StrJoin({letters[0], overlong[0], letters[1], letters[2], letters[3]}, "\n") + "\n");
  const std::string source = ROLLOUT_SOURCE_DIR;
  const std::vector<std::string> run = {
      "train", source + "/recipes/grpo_arith.yaml", "data.train_files=[data/train.jsonl]",
      "data.val_files=[data/val.jsonl]", "actor.model.path=" + source + "/tests/data/tiny-qwen2",
      "trainer.device=cpu", "trainer.total_epochs=1", "trainer.logger=[console]", "data.train_batch_size=4",
      "actor.ppo_mini_batch_size=4", "actor.ppo_micro_batch_size_per_gpu=4", "rollout.n=2",
      "rollout.cpu_kv_cache_gib=0.05", "data.max_prompt_length=16", "data.max_response_length=4",
      "trainer.save_freq=-1", "reward.name=null", std::string("reward.plugin=") + MISBEHAVING_PLUGIN_PATH};
  std::vector<std::string> filtered = run;
  filtered.push_back("data.filter_overlong_prompts=true");
  const testing::CommandResult train = RolloutIn(dir.path(), filtered);
  ASSERT_EQ(train.exit_code, 0) << train.output;
  EXPECT_THAT(train.output, HasSubstr("data.filter_overlong_prompts: dropped 4 of 20 training prompts longer than "
                                      "data.max_prompt_length (16 tokens); the first: data/train.jsonl:9"));
  EXPECT_THAT(train.output, HasSubstr("dropped 1 of 5 validation prompts"));
  EXPECT_THAT(train.output, HasSubstr("step 4/4"));

  const testing::CommandResult unfiltered = RolloutIn(dir.path(), run);
  EXPECT_NE(unfiltered.exit_code, 0);
  EXPECT_THAT(unfiltered.output, HasSubstr("more than data.max_prompt_length (16)"));
}

// verl's bypass mode: the rollout's log-probs become old_log_probs and the actor's
// old-log-prob pass does not run. On the CPU in float32 the engine's log-probs equal
// the actor's forward, so the first update sees the same ratios and losses as a run
// that recomputes them.
TEST(GrpoTrain, BypassModeAnchorsOnTheRolloutsLogProbsWithoutAnOldLogProbPass) {
  testing::TempDir dir("grpo_e2e_bypass");
  ASSERT_EQ(RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data", "--train", "16", "--val", "4"}).exit_code, 0);
  const std::string source = ROLLOUT_SOURCE_DIR;
  auto train = [&](const std::string& name, bool bypass) {
    const testing::CommandResult run = RolloutIn(
        dir.path(),
        {"train", source + "/recipes/grpo_arith.yaml", "data.train_files=[data/train.jsonl]",
         "data.val_files=[]", "actor.model.path=" + source + "/tests/data/tiny-qwen2", "trainer.device=cpu",
         "trainer.total_training_steps=1", "trainer.logger=[jsonl]", "trainer.experiment_name=" + name,
         "data.train_batch_size=4", "actor.ppo_mini_batch_size=2", "actor.ppo_micro_batch_size_per_gpu=2",
         "rollout.n=2", "rollout.cpu_kv_cache_gib=0.05", "data.max_response_length=8",
         absl::StrCat("algorithm.rollout_correction.bypass_mode=", bypass ? "true" : "false")});
    EXPECT_EQ(run.exit_code, 0) << run.output;
    const auto steps = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/" + name + "/metrics.jsonl"));
    EXPECT_EQ(steps.size(), 1u);
    return steps.empty() ? nlohmann::json() : steps[0];
  };
  const nlohmann::json recomputed = train("recomputed", false);
  const nlohmann::json bypassed = train("bypassed", true);
  EXPECT_TRUE(recomputed.contains("timing_s/old_log_prob"));
  EXPECT_FALSE(bypassed.contains("timing_s/old_log_prob"));
  EXPECT_TRUE(bypassed.contains("actor/entropy"));  // from the update
  EXPECT_EQ(bypassed["critic/score/mean"], recomputed["critic/score/mean"]);  // same samples
  for (const char* name : {"actor/pg_loss", "actor/ppo_kl", "actor/pg_clipfrac", "actor/grad_norm"}) {
    ASSERT_TRUE(bypassed.contains(name) && recomputed.contains(name)) << name;
    EXPECT_NEAR(bypassed[name].get<double>(), recomputed[name].get<double>(), 1e-4) << name;
  }
}

// As verl's split: 4 prompts in mini-batches of 3 train as one of 3 and one of 1 (each
// with its 2 responses), and a mini-batch larger than the batch is a clear error.
TEST(GrpoTrain, TheRowsLeftOverFormALastMiniBatchAndOneLargerThanTheBatchIsRefused) {
  testing::TempDir dir("grpo_e2e_mini_batches");
  ASSERT_EQ(RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data", "--train", "16", "--val", "4"}).exit_code, 0);
  const std::string source = ROLLOUT_SOURCE_DIR;
  const auto train = [&](const std::string& mini_batch) {
    return RolloutIn(dir.path(), {"train", source + "/recipes/grpo_arith.yaml", "data.train_files=[data/train.jsonl]",
                                  "data.val_files=[]", "actor.model.path=" + source + "/tests/data/tiny-qwen2",
                                  "trainer.device=cpu", "trainer.total_training_steps=1", "trainer.logger=[jsonl]",
                                  "data.train_batch_size=4", "actor.ppo_mini_batch_size=" + mini_batch, "rollout.n=2",
                                  "rollout.cpu_kv_cache_gib=0.05", "data.max_response_length=8"});
  };
  const testing::CommandResult left_over = train("3");
  ASSERT_EQ(left_over.exit_code, 0) << left_over.output;
  const auto steps = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/grpo_arith/metrics.jsonl"));
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_TRUE(std::isfinite(steps[0]["actor/grad_norm"].get<double>()));
  const testing::CommandResult too_large = train("5");
  EXPECT_NE(too_large.exit_code, 0);
  EXPECT_THAT(too_large.output,
              HasSubstr("data.train_batch_size (4) must be at least actor.ppo_mini_batch_size (5), as verl asserts"));
}

// use_dynamic_bsz through the workers: a budget that holds a whole mini-batch updates as
// one micro-batch of its rows does, and log-prob passes by tokens give the same scores;
// a budget below the longest row is refused, the actor's or a log-prob pass's.
TEST(GrpoTrain, DynamicBatchSizeFormsMicroBatchesByTokens) {
  testing::TempDir dir("grpo_e2e_dynamic_bsz");
  ASSERT_EQ(RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data", "--train", "16", "--val", "4"}).exit_code, 0);
  const std::string source = ROLLOUT_SOURCE_DIR;
  auto train = [&](const std::string& name, const std::vector<std::string>& batching) {
    std::vector<std::string> args = {
        "train", source + "/recipes/grpo_arith.yaml", "data.train_files=[data/train.jsonl]", "data.val_files=[]",
        "actor.model.path=" + source + "/tests/data/tiny-qwen2", "trainer.device=cpu",
        "trainer.total_training_steps=1", "trainer.logger=[jsonl]", "trainer.experiment_name=" + name,
        "data.train_batch_size=4", "actor.ppo_mini_batch_size=2", "rollout.n=2", "rollout.cpu_kv_cache_gib=0.05",
        "data.max_prompt_length=64", "data.max_response_length=8"};
    args.insert(args.end(), batching.begin(), batching.end());
    return RolloutIn(dir.path(), args);
  };
  ASSERT_EQ(train("rows", {"actor.ppo_micro_batch_size_per_gpu=4"}).exit_code, 0);
  const testing::CommandResult dynamic = train(
      "tokens", {"actor.ppo_micro_batch_size_per_gpu=1", "actor.use_dynamic_bsz=true", "actor.ppo_max_token_len_per_gpu=1000",
                 "rollout.log_prob_use_dynamic_bsz=true", "rollout.log_prob_max_token_len_per_gpu=150"});
  ASSERT_EQ(dynamic.exit_code, 0) << dynamic.output;
  const auto rows = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/rows/metrics.jsonl"));
  const auto tokens = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/tokens/metrics.jsonl"));
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_EQ(tokens.size(), 1u);
  // Other micro-batches in the old_log_prob pass may round its float32 sums differently.
  for (const char* name : {"actor/pg_loss", "actor/ppo_kl", "actor/entropy", "actor/grad_norm"}) {
    ASSERT_TRUE(tokens[0].contains(name) && rows[0].contains(name)) << name;
    EXPECT_NEAR(tokens[0][name].get<double>(), rows[0][name].get<double>(), 1e-5) << name;
  }
  const testing::CommandResult too_small = train("small", {"actor.use_dynamic_bsz=true", "actor.ppo_max_token_len_per_gpu=71"});
  EXPECT_NE(too_small.exit_code, 0);
  EXPECT_THAT(too_small.output, HasSubstr("actor.ppo_max_token_len_per_gpu (71) must be at least "
                                          "data.max_prompt_length + data.max_response_length (72)"));
  const testing::CommandResult ref_too_small =
      train("ref_small", {"ref.log_prob_use_dynamic_bsz=true", "ref.log_prob_max_token_len_per_gpu=50"});
  EXPECT_NE(ref_too_small.exit_code, 0);
  EXPECT_THAT(ref_too_small.output, HasSubstr("ref.log_prob_max_token_len_per_gpu (50) must be at least"));
}

TEST(GrpoTrain, RewardCrashesHangsAndRunawayAllocationsAreCountedAndTrainingGoesOn) {
  testing::TempDir dir("grpo_e2e_isolation");
  // Every prompt's ground truth tells the misbehaving plug-in what to do to the reward.
  std::string rows;
  for (const char* what : {"segfault", "abort", "loop", "allocate"}) {
    rows += absl::StrCat("{\"prompt\": \"1+1=\", \"ground_truth\": \"do:", what, "\", \"data_source\": \"x\"}\n");
  }
  dir.Write("data/train.jsonl", rows);
  const std::string source = ROLLOUT_SOURCE_DIR;
  const testing::CommandResult train = RolloutIn(
      dir.path(),
      {"train", source + "/recipes/grpo_arith.yaml", "data.train_files=[data/train.jsonl]", "data.val_files=[]",
       "actor.model.path=" + source + "/tests/data/tiny-qwen2", "trainer.device=cpu",
       "trainer.total_training_steps=2", "trainer.logger=[console,jsonl]", "data.train_batch_size=4",
       "actor.ppo_mini_batch_size=4", "rollout.n=2", "rollout.cpu_kv_cache_gib=0.05",
       "data.max_response_length=4", "reward.name=null", std::string("reward.plugin=") + MISBEHAVING_PLUGIN_PATH,
       "reward.isolation=process", "reward.timeout_s=2", "reward.memory_limit_mb=64", "reward.num_workers=2"});
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const auto steps = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/grpo_arith/metrics.jsonl"));
  ASSERT_EQ(steps.size(), 2u);
  for (const nlohmann::json& step : steps) {
    // Per step: 2 segfaults + 2 aborts + 2 runaway allocations are errors, 2 loops time out.
    EXPECT_EQ(step["reward/errors"], 6) << step.dump();
    EXPECT_EQ(step["reward/timeouts"], 2) << step.dump();
    EXPECT_EQ(step["critic/score/mean"], 0);
  }
}

}  // namespace
}  // namespace rollout
