// Asynchronous checkpoint saves (actor.checkpoint.async_save) through real `rollout
// train` runs on the CPU: the workers write while the next step generates, and every
// checkpoint holds the same bytes as a synchronous run's, with the same metrics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using testing::CommandResult;
using testing::FileContents;
using testing::LetterRows;
using testing::RolloutIn;
using testing::RunDependentMetric;
using testing::StepMetrics;

const std::string kSource = ROLLOUT_SOURCE_DIR;

// GRPO with PPO's critic (two roles save), a checkpoint after every step, under
// ckpt/<name>.
std::vector<std::string> PpoArgs(const std::string& name, const std::vector<std::string>& keys) {
  std::vector<std::string> args = {
      "train", kSource + "/recipes/ppo_arith_tiny.yaml", "data.train_files=[data/letters.jsonl]",
      "data.val_files=[]", "actor.model.path=" + kSource + "/tests/data/tiny-qwen2", "trainer.device=cpu",
      "trainer.logger=[console,jsonl]", "trainer.experiment_name=" + name, "trainer.default_local_dir=ckpt/" + name,
      "trainer.total_training_steps=4", "trainer.save_freq=1", "trainer.critic_warmup=0", "data.train_batch_size=4",
      "actor.ppo_mini_batch_size=2", "actor.ppo_micro_batch_size_per_gpu=2", "critic.ppo_mini_batch_size=2",
      "critic.ppo_micro_batch_size_per_gpu=2", "rollout.n=2", "rollout.cpu_kv_cache_gib=0.05",
      "data.max_response_length=8", "reward.name=null",
      std::string("reward.plugin=") + MISBEHAVING_PLUGIN_PATH};
  args.insert(args.end(), keys.begin(), keys.end());
  return args;
}

TEST(AsyncCheckpoint, WritesTheSynchronousBytesWhileTrainingGoesOn) {
  testing::TempDir dir("async_ckpt_e2e");
  dir.Write("data/letters.jsonl", LetterRows());
  const CommandResult sync = RolloutIn(dir.path(), PpoArgs("sync", {}));
  ASSERT_EQ(sync.exit_code, 0) << sync.output;
  const CommandResult async = RolloutIn(dir.path(), PpoArgs("async", {"actor.checkpoint.async_save=true"}));
  ASSERT_EQ(async.exit_code, 0) << async.output;

  for (int step = 1; step <= 4; ++step) {
    const std::string name = absl::StrCat("global_step_", step);
    for (const char* file : {"trainer_state.json", "actor/model.safetensors", "actor/optim.safetensors",
                             "actor/extra_state.json", "critic/model.safetensors", "critic/optim.safetensors",
                             "MANIFEST.json"}) {
      const std::string expected = FileContents(dir.Path(absl::StrCat("ckpt/sync/", name, "/", file)));
      ASSERT_FALSE(absl::StartsWith(expected, "missing")) << name << "/" << file;
      EXPECT_TRUE(FileContents(dir.Path(absl::StrCat("ckpt/async/", name, "/", file))) == expected)
          << name << "/" << file << " differs";
    }
  }
  EXPECT_EQ(FileContents(dir.Path("ckpt/async/latest_checkpointed_iteration.txt")), "4");

  const auto expected = StepMetrics(dir.path(), "sync");
  const auto actual = StepMetrics(dir.path(), "async");
  ASSERT_EQ(actual.size(), 4u);
  for (const auto& [step, metrics] : expected) {
    for (const auto& [name, value] : metrics.items()) {
      if (RunDependentMetric(name)) continue;
      EXPECT_EQ(actual.at(step)[name], value) << "step " << step << ": " << name;
    }
    // The previous step's save is committed before this step's updates.
    EXPECT_EQ(actual.at(step).contains("timing_s/save_checkpoint_wait"), step > 1) << "step " << step;
    EXPECT_FALSE(metrics.contains("timing_s/save_checkpoint_wait")) << "step " << step;
  }
}

}  // namespace
}  // namespace rollout
