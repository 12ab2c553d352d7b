// The rollout and the reference policy in a pool of their own (verl's split
// placement): the actor's weights reach the rollout worker after every update by a
// broadcast from the actor's rank 0 (Gloo on the CPU, NCCL on GPUs; not through the
// controller) and training gives the same results as with every role colocated — on
// the CPU the same metrics and the same bytes of the trained weights, full or LoRA
// (whose sync sends the adapters alone).
// ROLLOUT_E2E_DEVICE=cuda runs the same on GPUs (by hand: not a ctest).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using testing::CommandResult;
using testing::Device;
using testing::LetterRows;
using testing::RolloutIn;
using testing::RunDependentMetric;
using testing::StepMetrics;
using ::testing::HasSubstr;

const std::string kSource = ROLLOUT_SOURCE_DIR;

std::vector<std::string> SeparatePools() {
  return {"resource_pools.train.device=" + Device(), "resource_pools.generate.device=" + Device(),
          "placement.actor=train", "placement.rollout=generate", "placement.ref=generate"};
}

// GRPO with a KL loss against the reference, validation at steps 0, 2 and 3, and a
// checkpoint at the end, under ckpt/<name>.
std::vector<std::string> GrpoArgs(const std::string& name, const std::vector<std::string>& keys) {
  std::vector<std::string> args = {
      "train", kSource + "/recipes/grpo_arith.yaml", "data.train_files=[data/letters.jsonl]",
      "data.val_files=[data/letters.jsonl]", "actor.model.path=" + kSource + "/tests/data/tiny-qwen2",
      "trainer.device=" + Device(), "trainer.logger=[console,jsonl]", "trainer.experiment_name=" + name,
      "trainer.default_local_dir=ckpt/" + name, "trainer.total_training_steps=3", "trainer.test_freq=2",
      "trainer.save_freq=3", "data.train_batch_size=4", "actor.ppo_mini_batch_size=2",
      "actor.ppo_micro_batch_size_per_gpu=2", "actor.use_kl_loss=true", "actor.optim.lr=1e-3", "rollout.n=2",
      "rollout.cpu_kv_cache_gib=0.05", "data.max_response_length=8", "reward.name=null",
      std::string("reward.plugin=") + MISBEHAVING_PLUGIN_PATH};
  args.insert(args.end(), keys.begin(), keys.end());
  return args;
}

// Runs the recipe colocated and with separate pools (plus `keys`) and expects equal
// metrics (but wall-clock ones and the sync's timing) and equal trained weights in
// `weights_file` of the last checkpoint.
void ExpectSameTraining(const std::vector<std::string>& keys, const std::string& weights_file) {
  testing::TempDir dir("separate_rollout_e2e");
  dir.Write("data/letters.jsonl", LetterRows());
  const CommandResult colocated = RolloutIn(dir.path(), GrpoArgs("colocated", keys));
  ASSERT_EQ(colocated.exit_code, 0) << colocated.output;
  std::vector<std::string> separate_keys = keys;
  const std::vector<std::string> pools = SeparatePools();
  separate_keys.insert(separate_keys.end(), pools.begin(), pools.end());
  const CommandResult separate = RolloutIn(dir.path(), GrpoArgs("separate", separate_keys));
  ASSERT_EQ(separate.exit_code, 0) << separate.output;
  EXPECT_THAT(separate.output, HasSubstr("placement: 2 worker process(es)"));
  // By broadcast: a rollout worker in the weight-sync group has no
  // rollout.update_weights, so a relay would have failed the run.
  EXPECT_THAT(separate.output, HasSubstr(absl::StrCat("the rollout's pool generate gets the weights of the actor's pool "
                                                      "train by broadcast from its rank 0 over ",
                                                      Device() == "cpu" ? "Gloo" : "NCCL")));
  EXPECT_THAT(separate.output, HasSubstr("joined weight-sync group weight_sync.train.generate as rank 1 of 2"));

  const auto expected = StepMetrics(dir.path(), "colocated");
  const auto actual = StepMetrics(dir.path(), "separate");
  ASSERT_EQ(expected.size(), 4u);  // validation at step 0, then three steps
  ASSERT_EQ(actual.size(), expected.size());
  for (const auto& [step, metrics] : expected) {
    size_t compared = 0;
    for (const auto& [name, value] : metrics.items()) {
      if (RunDependentMetric(name)) continue;
      ASSERT_TRUE(actual.at(step).contains(name)) << "step " << step << " lacks " << name;
      EXPECT_EQ(actual.at(step)[name], value) << "step " << step << ": " << name;
      ++compared;
    }
    EXPECT_GT(compared, step == 0 ? 1u : 20u) << "step " << step;
    // A sync precedes each generation on weights the rollout has not seen: the
    // validation at step 0 (a warm start or a checkpoint may have changed the actor),
    // then after every update the next generation — step 2's rollout, the validations
    // after steps 2 and 3 — but not step 1's rollout (the weights of step 0).
    EXPECT_EQ(actual.at(step).contains("timing_s/update_weights"), step != 1) << "step " << step;
    EXPECT_FALSE(metrics.contains("timing_s/update_weights")) << "colocated roles sync nothing";
  }
  const absl::StatusOr<std::string> expected_weights = ReadFile(dir.Path("ckpt/colocated/global_step_3/" + weights_file));
  const absl::StatusOr<std::string> actual_weights = ReadFile(dir.Path("ckpt/separate/global_step_3/" + weights_file));
  ASSERT_TRUE(expected_weights.ok()) << expected_weights.status();
  ASSERT_TRUE(actual_weights.ok()) << actual_weights.status();
  EXPECT_TRUE(*expected_weights == *actual_weights) << weights_file << " differs";
}

TEST(SeparateRolloutTrain, GivesTheColocatedResults) {
  ExpectSameTraining({}, "actor/model.safetensors");
}

TEST(SeparateRolloutTrain, WithLoraSendsTheAdaptersAndGivesTheColocatedResults) {
  ExpectSameTraining({"actor.model.lora_rank=4", "actor.model.lora_alpha=8"},
                     "actor/lora_adapter/adapter_model.safetensors");
}

}  // namespace
}  // namespace rollout
