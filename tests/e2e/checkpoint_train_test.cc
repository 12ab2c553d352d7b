// Checkpoints through real `rollout train` runs on the CPU (tiny Qwen2 fixture, worker
// processes): a resumed GRPO run matches an uninterrupted one bit for bit, a crash
// during a save resumes from the last complete checkpoint, a refreshed reference
// (ref.sync_ref_model) resumes with the run, del_local_ckpt_after_load
// really deletes, a checkpoint at an epoch's end continues with the next epoch, and
// PPO with a critic and SFT resume exactly too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/crash_point.h"
#include "common/file_system.h"
#include "common/file_util.h"
#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using testing::CommandResult;
using testing::FileContents;
using testing::LetterRows;
using testing::ReadJsonLines;
using testing::RolloutIn;
using testing::RunDependentMetric;
using testing::StepMetrics;
using ::testing::HasSubstr;
using ::testing::Not;

// GRPO on the tiny fixture, small enough for CI: 4 prompts x 2 samples a step, 8 new
// tokens, no validation, scored 1 when the response contains the ground truth (the
// test plug-in's behaviour for ordinary ground truths). Logs go to
// jsonl_log/rollout_demo/<name>, checkpoints to ckpt/<name>.
std::vector<std::string> GrpoArgs(const std::string& data, const std::string& name,
                                  const std::vector<std::string>& keys) {
  const std::string source = ROLLOUT_SOURCE_DIR;
  std::vector<std::string> args = {
      "train", source + "/recipes/grpo_arith.yaml", "data.train_files=[" + data + "]", "data.val_files=[]",
      "actor.model.path=" + source + "/tests/data/tiny-qwen2", "trainer.device=cpu",
      "trainer.logger=[console,jsonl]", "trainer.experiment_name=" + name,
      "trainer.default_local_dir=ckpt/" + name,
      "data.train_batch_size=4", "actor.ppo_mini_batch_size=2", "actor.ppo_micro_batch_size_per_gpu=2",
      "rollout.n=2", "rollout.cpu_kv_cache_gib=0.05", "data.max_response_length=8", "reward.name=null",
      std::string("reward.plugin=") + MISBEHAVING_PLUGIN_PATH};
  args.insert(args.end(), keys.begin(), keys.end());
  return args;
}

bool Exists(const std::string& path) { return DefaultFileSystem()->Stat(path).value().exists; }

// Every metric but the run-dependent ones must be equal (the same doubles, not close ones).
void ExpectSameMetrics(const nlohmann::json& expected, const nlohmann::json& actual, int step) {
  size_t compared = 0;
  for (const auto& [name, value] : expected.items()) {
    if (RunDependentMetric(name)) continue;
    ASSERT_TRUE(actual.contains(name)) << "step " << step << " lacks " << name;
    EXPECT_EQ(actual[name], value) << "step " << step << ": " << name;
    ++compared;
  }
  for (const auto& [name, value] : actual.items()) {
    EXPECT_TRUE(RunDependentMetric(name) || expected.contains(name)) << "step " << step << " has an extra " << name;
  }
  EXPECT_GT(compared, 20u);
}

// Two runs' checkpoints of one step hold bit-for-bit equal files for `roles`.
void ExpectSameCheckpoint(const std::string& expected_dir, const std::string& actual_dir,
                          const std::vector<std::string>& roles = {"actor"}) {
  std::vector<std::string> files = {"trainer_state.json"};
  for (const std::string& role : roles) {
    for (const char* file : {"model.safetensors", "optim.safetensors", "extra_state.json"}) {
      files.push_back(JoinPath(role, file));
    }
  }
  for (const std::string& file : files) {
    const std::string expected = FileContents(JoinPath(expected_dir, file));
    ASSERT_THAT(expected, Not(HasSubstr("missing"))) << file;
    EXPECT_TRUE(FileContents(JoinPath(actual_dir, file)) == expected) << file << " differs";
  }
}

// One uninterrupted 6-step GRPO run, checkpointed after every step, that the resumed
// runs are compared with; its data (data/letters.jsonl); and SFT pairs.
class CheckpointTrain : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    reference_ = new testing::TempDir("ckpt_e2e_reference");
    reference_->Write("data/letters.jsonl", LetterRows());
    const CommandResult data = RolloutIn(reference_->path(), {"gen-data", "arithmetic", "--out", "data",
                                                              "--train", "16", "--val", "4"});
    ASSERT_EQ(data.exit_code, 0) << data.output;
    const CommandResult run = RolloutIn(
        reference_->path(),
        GrpoArgs(Reference("data/letters.jsonl"), "straight",
                 {"trainer.total_training_steps=6", "trainer.save_freq=1"}));
    ASSERT_EQ(run.exit_code, 0) << run.output;
  }
  static void TearDownTestSuite() {
    delete reference_;
    reference_ = nullptr;
  }

  static std::string Reference(const std::string& name) { return reference_->Path(name); }

  static testing::TempDir* reference_;
};

testing::TempDir* CheckpointTrain::reference_ = nullptr;

TEST_F(CheckpointTrain, ThreeStepsThenAResumedRunOfThreeMoreMatchSixStraightBitForBit) {
  testing::TempDir dir("ckpt_e2e_resume");
  const std::string data = Reference("data/letters.jsonl");
  const CommandResult first = RolloutIn(
      dir.path(), GrpoArgs(data, "resumed", {"trainer.total_training_steps=3", "trainer.save_freq=3"}));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_THAT(first.output, HasSubstr("no checkpoint in ckpt/resumed, starting fresh"));
  const CommandResult second = RolloutIn(
      dir.path(), GrpoArgs(data, "resumed", {"trainer.total_training_steps=6", "trainer.save_freq=3"}));
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_THAT(second.output, HasSubstr("resuming from ckpt/resumed/global_step_3"));
  const std::string resolved = dir.Path("ckpt/resumed/resolved_recipe.yaml");
  EXPECT_THAT(FileContents(resolved), HasSubstr("total_training_steps: 6"));
  // Relaunches that stop before training (a missing data file; a mini-batch larger than
  // the batch) keep the resolved recipe the checkpoints were trained with.
  const CommandResult missing_data = RolloutIn(
      dir.path(), GrpoArgs(dir.Path("no_such.jsonl"), "resumed", {"trainer.total_training_steps=9"}));
  EXPECT_NE(missing_data.exit_code, 0);
  EXPECT_THAT(missing_data.output, HasSubstr("data.train_files"));
  const CommandResult bad_split = RolloutIn(
      dir.path(), GrpoArgs(data, "resumed", {"trainer.total_training_steps=9", "actor.ppo_mini_batch_size=8"}));
  EXPECT_NE(bad_split.exit_code, 0);
  EXPECT_THAT(bad_split.output, HasSubstr("must be at least actor.ppo_mini_batch_size (8)"));
  EXPECT_THAT(FileContents(resolved), HasSubstr("total_training_steps: 6"));
  EXPECT_THAT(FileContents(resolved), Not(HasSubstr("total_training_steps: 9")));

  ExpectSameCheckpoint(Reference("ckpt/straight/global_step_6"), dir.Path("ckpt/resumed/global_step_6"));
  const std::map<int, nlohmann::json> straight = StepMetrics(reference_->path(), "straight");
  const std::map<int, nlohmann::json> resumed = StepMetrics(dir.path(), "resumed");
  for (int step = 4; step <= 6; ++step) {
    ASSERT_TRUE(straight.count(step) && resumed.count(step)) << step;
    ExpectSameMetrics(straight.at(step), resumed.at(step), step);
    EXPECT_TRUE(resumed.at(step).contains("timing_s/save_checkpoint") == (step == 6)) << step;
  }
}

// TR-DPO's reference refresh (ref.sync_ref_model, every 2 steps) is state: a run resumed
// at step 3, between two refreshes, scores its KL term against the reference refreshed at
// step 2 and refreshes it again at step 4 exactly as an uninterrupted run does.
TEST_F(CheckpointTrain, ARefreshedReferenceResumesWithTheRun) {
  testing::TempDir dir("ckpt_e2e_sync_ref");
  const std::string data = Reference("data/letters.jsonl");
  const auto run = [&](const std::string& name, int steps) {
    return RolloutIn(dir.path(), GrpoArgs(data, name,
                                          {absl::StrCat("trainer.total_training_steps=", steps), "trainer.save_freq=3",
                                           "ref.sync_ref_model=true", "ref.ref_model_sync_steps=2",
                                           "ref.ref_model_mixup_alpha=0.5"}));
  };
  const CommandResult straight = run("straight", 4);
  ASSERT_EQ(straight.exit_code, 0) << straight.output;
  const CommandResult first = run("resumed", 3);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const CommandResult second = run("resumed", 4);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_THAT(second.output, HasSubstr("resuming from ckpt/resumed/global_step_3"));
  const std::map<int, nlohmann::json> expected = StepMetrics(dir.path(), "straight");
  const std::map<int, nlohmann::json> resumed = StepMetrics(dir.path(), "resumed");
  ASSERT_TRUE(expected.count(4) && resumed.count(4));
  EXPECT_NE(expected.at(4)["actor/kl_loss"].get<double>(), 0);
  ExpectSameMetrics(expected.at(4), resumed.at(4), 4);
  for (const char* file : {"actor/model.safetensors", "actor/ref_model.safetensors"}) {
    const std::string saved = FileContents(dir.Path(JoinPath("ckpt/straight/global_step_4", file)));
    ASSERT_THAT(saved, Not(HasSubstr("missing"))) << file;
    EXPECT_TRUE(FileContents(dir.Path(JoinPath("ckpt/resumed/global_step_4", file))) == saved) << file;
  }
}

TEST_F(CheckpointTrain, ACrashDuringASaveResumesFromTheLastCompleteCheckpoint) {
  testing::TempDir dir("ckpt_e2e_crash");
  const std::string data = Reference("data/letters.jsonl");
  const std::vector<std::string> four_steps = {"trainer.total_training_steps=4", "trainer.save_freq=2"};
  const CommandResult first =
      RolloutIn(dir.path(), GrpoArgs(data, "crash", {"trainer.total_training_steps=2", "trainer.save_freq=2"}));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  // Resumes from step 2, trains 3 and 4, dies after writing step 4's manifest.
  const CommandResult crashed =
      RolloutIn(dir.path(), GrpoArgs(data, "crash", four_steps), "ROLLOUT_CRASH_AT=ckpt.save.after_manifest");
  ASSERT_EQ(crashed.exit_code, kCrashPointExitCode) << crashed.output;
  EXPECT_TRUE(Exists(dir.Path("ckpt/crash/.global_step_4.partial/MANIFEST.json")));
  EXPECT_FALSE(Exists(dir.Path("ckpt/crash/global_step_4")));

  const CommandResult restarted = RolloutIn(dir.path(), GrpoArgs(data, "crash", four_steps));
  ASSERT_EQ(restarted.exit_code, 0) << restarted.output;
  EXPECT_THAT(restarted.output, HasSubstr("resuming from ckpt/crash/global_step_2"));
  EXPECT_FALSE(Exists(dir.Path("ckpt/crash/.global_step_4.partial")));
  EXPECT_EQ(FileContents(dir.Path("ckpt/crash/latest_checkpointed_iteration.txt")), "4");
  ExpectSameCheckpoint(Reference("ckpt/straight/global_step_4"), dir.Path("ckpt/crash/global_step_4"));
}

TEST_F(CheckpointTrain, DelLocalCkptAfterLoadDeletesAndARestartWithoutANewerOneFails) {
  testing::TempDir dir("ckpt_e2e_delete");
  const std::string data = Reference("data/letters.jsonl");
  const std::vector<std::string> two_steps = {"trainer.total_training_steps=2", "trainer.save_freq=2"};
  ASSERT_EQ(RolloutIn(dir.path(), GrpoArgs(data, "delete", two_steps)).exit_code, 0);
  ASSERT_TRUE(Exists(dir.Path("ckpt/delete/global_step_2/actor/model.safetensors")));

  std::vector<std::string> keys = two_steps;
  keys.push_back("trainer.del_local_ckpt_after_load=true");
  const CommandResult loaded = RolloutIn(dir.path(), GrpoArgs(data, "delete", keys));
  ASSERT_EQ(loaded.exit_code, 0) << loaded.output;
  EXPECT_THAT(loaded.output, HasSubstr("resuming from ckpt/delete/global_step_2"));
  EXPECT_THAT(loaded.output, HasSubstr("nothing left to train: resumed at step 2 of 2"));
  EXPECT_FALSE(Exists(dir.Path("ckpt/delete/global_step_2/actor")));
  EXPECT_TRUE(Exists(dir.Path("ckpt/delete/global_step_2/trainer_state.json")));
  EXPECT_EQ(FileContents(dir.Path("ckpt/delete/latest_checkpointed_iteration.txt")), "2");

  const CommandResult restarted = RolloutIn(
      dir.path(), GrpoArgs(data, "delete", {"trainer.total_training_steps=4", "trainer.save_freq=2"}));
  EXPECT_NE(restarted.exit_code, 0);
  EXPECT_THAT(restarted.output, HasSubstr("global_step_2 was deleted after loading"));
  EXPECT_THAT(restarted.output, Not(HasSubstr("starting fresh")));
}

TEST_F(CheckpointTrain, ACheckpointAtTheEndOfAnEpochContinuesWithTheNextEpoch) {
  testing::TempDir dir("ckpt_e2e_epoch");
  const std::string data = Reference("data/letters.jsonl");  // 4 steps an epoch
  const CommandResult first =
      RolloutIn(dir.path(), GrpoArgs(data, "epoch", {"trainer.total_epochs=1", "trainer.save_freq=4"}));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  ASSERT_TRUE(Exists(dir.Path("ckpt/epoch/global_step_4")));
  const CommandResult second =
      RolloutIn(dir.path(), GrpoArgs(data, "epoch", {"trainer.total_epochs=2", "trainer.save_freq=4"}));
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_THAT(second.output, HasSubstr("resuming from ckpt/epoch/global_step_4"));
  const std::map<int, nlohmann::json> steps = StepMetrics(dir.path(), "epoch");
  for (int step = 5; step <= 8; ++step) {
    ASSERT_TRUE(steps.count(step)) << "step " << step << " did not run:\n" << second.output;
    EXPECT_EQ(steps.at(step)["training/epoch"], 1) << step;
  }
  EXPECT_TRUE(Exists(dir.Path("ckpt/epoch/global_step_8/actor/model.safetensors")));
  // Step 5 after the resume is the straight run's step 5: same batch, same weights.
  ExpectSameMetrics(StepMetrics(reference_->path(), "straight").at(5), steps.at(5), 5);
}

TEST_F(CheckpointTrain, APpoRunWithACriticAndAKlControllerResumesExactly) {
  testing::TempDir dir("ckpt_e2e_ppo");
  const std::string source = ROLLOUT_SOURCE_DIR;
  const auto ppo = [&](const std::string& name, const std::vector<std::string>& keys) {
    std::vector<std::string> args = GrpoArgs(Reference("data/letters.jsonl"), name, keys);
    args[1] = source + "/recipes/ppo_arith_tiny.yaml";  // gae with a critic, KL in the reward
    args.push_back("critic.ppo_mini_batch_size=2");
    args.push_back("algorithm.kl_ctrl.type=adaptive");  // a coefficient that moves: restored from the state
    args.push_back("data.val_files=[" + Reference("data/val.jsonl") + "]");
    args.push_back("trainer.val_before_train=true");
    return args;
  };
  ASSERT_EQ(RolloutIn(dir.path(), ppo("ppo_straight", {"trainer.total_training_steps=4", "trainer.save_freq=4"}))
                .exit_code,
            0);
  for (const char* steps : {"trainer.total_training_steps=2", "trainer.total_training_steps=4"}) {
    const CommandResult run = RolloutIn(dir.path(), ppo("ppo_resumed", {steps, "trainer.save_freq=2"}));
    ASSERT_EQ(run.exit_code, 0) << run.output;
  }
  ExpectSameCheckpoint(dir.Path("ckpt/ppo_straight/global_step_4"), dir.Path("ckpt/ppo_resumed/global_step_4"),
                       {"actor", "critic"});
  EXPECT_THAT(FileContents(dir.Path("ckpt/ppo_resumed/global_step_4/trainer_state.json")), HasSubstr("kl_coef"));
  // Each launch validated before training, at the step it started from (as verl logs it).
  std::vector<int> validated_before_training;
  for (const nlohmann::json& line : ReadJsonLines(dir.Path("jsonl_log/rollout_demo/ppo_resumed/metrics.jsonl"))) {
    if (!line.contains("timing_s/step")) validated_before_training.push_back(line["step"].get<int>());
  }
  EXPECT_EQ(validated_before_training, (std::vector<int>{0, 2}));
}

TEST_F(CheckpointTrain, AnInterruptedSftRunResumesExactly) {
  testing::TempDir dir("ckpt_e2e_sft");
  const std::string source = ROLLOUT_SOURCE_DIR;
  const auto sft = [&](const std::string& name) {
    return std::vector<std::string>{
        "train", source + "/recipes/sft_tiny.yaml",
        "data.train_files=[" + Reference("data/sft_train.jsonl") + "]",
        "data.val_files=[" + Reference("data/sft_val.jsonl") + "]", "trainer.val_before_train=true",
        "actor.model.path=" + source + "/tests/data/tiny-qwen2",
        "trainer.experiment_name=" + name, "trainer.default_local_dir=ckpt/" + name,
        "trainer.total_training_steps=4", "trainer.save_freq=2", "data.train_batch_size=4",
        "actor.ppo_micro_batch_size_per_gpu=4", "trainer.logger=[console,jsonl]"};
  };
  const CommandResult straight = RolloutIn(dir.path(), sft("sft_straight"));
  ASSERT_EQ(straight.exit_code, 0) << straight.output;
  // Dies once step 2's checkpoint is complete (tracker written), then starts again.
  const CommandResult interrupted =
      RolloutIn(dir.path(), sft("sft_resumed"), "ROLLOUT_CRASH_AT=ckpt.save.after_tracker");
  ASSERT_EQ(interrupted.exit_code, kCrashPointExitCode) << interrupted.output;
  const CommandResult resumed = RolloutIn(dir.path(), sft("sft_resumed"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_THAT(resumed.output, HasSubstr("resuming from ckpt/sft_resumed/global_step_2"));
  ExpectSameCheckpoint(dir.Path("ckpt/sft_straight/global_step_4"), dir.Path("ckpt/sft_resumed/global_step_4"));
  const std::map<int, nlohmann::json> a = StepMetrics(dir.path(), "sft_straight");
  const std::map<int, nlohmann::json> b = StepMetrics(dir.path(), "sft_resumed");
  for (int step = 3; step <= 4; ++step) EXPECT_EQ(a.at(step)["train/loss"], b.at(step)["train/loss"]) << step;
  // Each launch validated before training, at the step it started from (as verl logs it).
  std::vector<int> validated_before_training;
  for (const nlohmann::json& line : ReadJsonLines(dir.Path("jsonl_log/rollout_demo/sft_resumed/metrics.jsonl"))) {
    if (line.contains("val/loss") && !line.contains("train/loss")) {
      validated_before_training.push_back(line["step"].get<int>());
    }
  }
  EXPECT_EQ(validated_before_training, (std::vector<int>{0, 2}));
}

}  // namespace
}  // namespace rollout
