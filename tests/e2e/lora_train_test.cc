// GRPO with LoRA (recipes/grpo_lora_tiny.yaml) end to end on the CPU through real
// worker processes, at a reduced size:
//  * `rollout train` runs the recipe (SFT warm start and GRPO, both through the
//    adapters) and logs verl's metrics, with a KL loss against the base model;
//  * the same loop driven from here (the trainers `rollout train` runs, on workers this
//    test starts) reads the policy's parameter checksums (diag.policy_parameter_checksums)
//    before training, after the warm start and after GRPO: only the adapters change and
//    the base weights stay bit-identical to the fixture's file; with lora_rank 0 the
//    same probe sees every base weight change (so the first check can fail).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/crc32c.h"
#include "common/status_macros.h"
#include "controller/cli_recipe.h"
#include "controller/local_launcher.h"
#include "controller/metrics_logger.h"
#include "controller/offline_trainer.h"
#include "controller/ppo_trainer.h"
#include "controller/runtime.h"
#include "models/safetensors.h"
#include "rewards/reward_runner_factory.h"
#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using testing::ReadJsonLines;
using testing::RolloutIn;

const std::string kSource = ROLLOUT_SOURCE_DIR;
const std::string kFixture = kSource + "/tests/data/tiny-qwen2";

// The recipe at a reduced size: 4 prompts x 4 responses per step, short responses, a
// two-step warm start. `data` holds `rollout gen-data arithmetic` output.
std::vector<std::string> ReducedLoraRecipe(const std::string& data, int steps) {
  return {kSource + "/recipes/grpo_lora_tiny.yaml",
          absl::StrCat("data.train_files=[", data, "/train.jsonl]"),
          absl::StrCat("data.val_files=[", data, "/val.jsonl]"),
          absl::StrCat("sft_warm_start.train_files=[", data, "/sft_train.jsonl]"),
          absl::StrCat("sft_warm_start.val_files=[", data, "/sft_val.jsonl]"),
          "actor.model.path=" + kFixture,
          absl::StrCat("trainer.total_training_steps=", steps),
          "data.train_batch_size=4",
          "actor.ppo_mini_batch_size=2",
          "rollout.n=4",
          "rollout.cpu_kv_cache_gib=0.05",
          "data.max_response_length=6",
          "sft_warm_start.total_training_steps=2",
          "sft_warm_start.train_batch_size=16",
          "sft_warm_start.test_freq=-1"};
}

std::string GenerateArithmetic(const testing::TempDir& dir) {
  const testing::CommandResult data =
      RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data", "--train", "64", "--val", "8"});
  EXPECT_EQ(data.exit_code, 0) << data.output;
  return dir.Path("data");
}

TEST(LoraTrain, TheRecipeTrainsThroughRolloutTrain) {
  testing::TempDir dir("lora_e2e");
  const std::string data = GenerateArithmetic(dir);
  std::vector<std::string> args = {"train"};
  for (const std::string& arg : ReducedLoraRecipe(data, 3)) args.push_back(arg);
  const testing::CommandResult train = RolloutIn(dir.path(), args);
  ASSERT_EQ(train.exit_code, 0) << train.output;
  EXPECT_THAT(train.output, ::testing::HasSubstr("lora_rank: 8"));  // the resolved recipe

  const auto warm = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/grpo_lora_tiny_sft_warm_start/metrics.jsonl"));
  ASSERT_FALSE(warm.empty());
  const auto steps = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/grpo_lora_tiny/metrics.jsonl"));
  ASSERT_EQ(steps.size(), 4u);  // validation before training, then three steps
  for (int step = 1; step <= 3; ++step) {
    const nlohmann::json& metrics = steps[static_cast<size_t>(step)];
    for (const char* name : {"timing_s/ref", "actor/pg_loss", "actor/kl_loss", "actor/grad_norm",
                             "critic/score/mean"}) {
      ASSERT_TRUE(metrics.contains(name)) << "step " << step << " lacks " << name;
    }
    // The adapters move the policy away from the reference (the adapters disabled).
    EXPECT_GT(metrics["actor/grad_norm"].get<double>(), 0) << metrics.dump();
    EXPECT_GE(metrics["critic/score/mean"].get<double>(), 0);
    EXPECT_LE(metrics["critic/score/mean"].get<double>(), 1);
  }
  EXPECT_GT(steps[3]["actor/kl_loss"].get<double>(), 0) << steps[3].dump();
}

// CRC32C (as 8 hex digits) of each tensor of the policy model, by name.
struct PolicyChecksums {
  std::map<std::string, std::string> base;
  std::map<std::string, std::string> lora;
};

// Names whose checksum differs between `a` and `b` (which hold the same names).
std::vector<std::string> Changed(const std::map<std::string, std::string>& a,
                                 const std::map<std::string, std::string>& b) {
  std::vector<std::string> changed;
  for (const auto& [name, crc] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second != crc) changed.push_back(name);
  }
  return changed;
}

// The fixture's weights as they lie in its model.safetensors.
std::map<std::string, std::string> FixtureChecksums() {
  std::map<std::string, std::string> checksums;
  auto reader = models::SafetensorsReader::OpenDirectory(kFixture);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return checksums;
  for (const std::string& name : (*reader)->Names()) {
    const at::Tensor tensor = (*reader)->Load(name).value();
    checksums[name] = crc32c::ToHex(
        crc32c::Value(absl::string_view(static_cast<const char*>(tensor.data_ptr()), tensor.nbytes())));
  }
  return checksums;
}

// For runs driven from the test: no validation, nothing read from or written to the
// working directory (the checkpoint directory is the run's own, never resumed from).
std::vector<std::string> InProcessKeys(const testing::TempDir& dir) {
  return {"trainer.val_before_train=false", "data.val_files=[]", "trainer.resume_mode=disable",
          "trainer.save_freq=-1", "trainer.default_local_dir=" + dir.Path("checkpoints")};
}

controller::MetricsLoggerOptions Quiet() {
  controller::MetricsLoggerOptions options;
  options.loggers = {};
  return options;
}

// `rollout train`'s PPO path (the SFT warm start, then GRPO), driven from the test so
// that it can ask the workers for their parameter checksums between phases.
class LoraTrainInProcess : public ::testing::Test {
 protected:
  // Resolves `positional` (RECIPE key=value...), starts the workers and initialises
  // their roles.
  absl::Status StartRun(const std::vector<std::string>& positional) {
    ASSIGN_OR_RETURN(run_, controller::ResolveRun(positional));
    controller::RuntimeOptions options;
    options.worker_binary = ROLLOUT_BINARY_PATH;
    options.recipe_yaml = run_.recipe_yaml;
    options.config = run_.recipe.recipe.runtime();
    options.worker_log_level = "warning";
    ASSIGN_OR_RETURN(runtime_, controller::ControllerRuntime::Start(run_.placement, options, &launcher_, &health_));
    ASSIGN_OR_RETURN(policy_, runtime_->GroupForRole("actor"));
    ASSIGN_OR_RETURN(reward_, rewards::CreateRewardRunner(run_.recipe.recipe.reward(), ROLLOUT_BINARY_PATH));
    controller::PpoTrainerSetup setup;
    setup.recipe = run_.recipe.recipe;
    setup.policy = policy_;
    setup.reward = reward_.get();
    ASSIGN_OR_RETURN(trainer_, controller::PpoTrainer::Create(setup));
    return absl::OkStatus();
  }

  // The recipe's SFT warm start (actor.sft_update), then every PPO step
  // (actor.update_actor); no metric sinks.
  absl::Status WarmStart() {
    ASSIGN_OR_RETURN(auto sft, controller::OfflineTrainer::CreateSftWarmStart(run_.recipe.recipe, policy_));
    ASSIGN_OR_RETURN(auto logger, controller::MetricsLogger::Create(Quiet()));
    return sft->Fit(*logger);
  }
  absl::Status Fit() {
    ASSIGN_OR_RETURN(auto logger, controller::MetricsLogger::Create(Quiet()));
    return trainer_->Fit(*logger);
  }

  absl::StatusOr<PolicyChecksums> Checksums() {
    ASSIGN_OR_RETURN(const Batch reply, policy_->CallRankZero("diag.policy_parameter_checksums", Batch()));
    ASSIGN_OR_RETURN(const std::vector<std::string> names, reply.Strings("name"));
    ASSIGN_OR_RETURN(const std::vector<std::string> kinds, reply.Strings("kind"));
    ASSIGN_OR_RETURN(const std::vector<std::string> crcs, reply.Strings("crc32c"));
    PolicyChecksums checksums;
    for (size_t i = 0; i < names.size(); ++i) {
      (kinds[i] == "lora" ? checksums.lora : checksums.base)[names[i]] = crcs[i];
    }
    return checksums;
  }

  testing::TempDir dir_{"lora_weights"};  // the data; outlives the workers
  controller::ResolvedRun run_;
  controller::LocalLauncher launcher_;
  controller::RunHealth health_;
  std::unique_ptr<controller::ControllerRuntime> runtime_;
  controller::WorkerGroup* policy_ = nullptr;
  std::unique_ptr<rewards::RewardRunner> reward_;
  std::unique_ptr<controller::PpoTrainer> trainer_;
};

TEST_F(LoraTrainInProcess, OnlyAdapterWeightsChangeAndBaseWeightsStayBitIdentical) {
  const std::string data = GenerateArithmetic(dir_);
  std::vector<std::string> recipe = ReducedLoraRecipe(data, 2);
  for (const std::string& key : InProcessKeys(dir_)) recipe.push_back(key);
  const absl::Status started = StartRun(recipe);
  ASSERT_TRUE(started.ok()) << started;
  const absl::StatusOr<PolicyChecksums> before = Checksums();
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_EQ(before->base, FixtureChecksums());  // the weights the worker holds are the file's
  // Rank-8 adapters (A and B) on the 7 linear layers of each of the 2 decoder layers.
  ASSERT_EQ(before->lora.size(), 2u * 7u * 2u);

  // Each learner in turn: the SFT warm start, then GRPO's actor updates.
  const absl::Status warmed = WarmStart();
  ASSERT_TRUE(warmed.ok()) << warmed;
  const absl::StatusOr<PolicyChecksums> warm = Checksums();
  ASSERT_TRUE(warm.ok()) << warm.status();
  const absl::Status fitted = Fit();
  ASSERT_TRUE(fitted.ok()) << fitted;
  const absl::StatusOr<PolicyChecksums> after = Checksums();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_THAT(Changed(before->base, warm->base), ::testing::IsEmpty());
  EXPECT_THAT(Changed(warm->base, after->base), ::testing::IsEmpty());
  EXPECT_EQ(Changed(before->lora, warm->lora).size(), before->lora.size()) << "every adapter tensor trains";
  EXPECT_EQ(Changed(warm->lora, after->lora).size(), before->lora.size()) << "every adapter tensor trains";
}

TEST_F(LoraTrainInProcess, WithoutLoraTheSameProbeSeesTheBaseWeightsChange) {
  const std::string data = GenerateArithmetic(dir_);
  std::vector<std::string> recipe = ReducedLoraRecipe(data, 1);
  for (const std::string& key : InProcessKeys(dir_)) recipe.push_back(key);
  recipe.push_back("actor.model.lora_rank=0");
  recipe.push_back("actor.optim.lr=1.0e-4");
  const absl::Status started = StartRun(recipe);
  ASSERT_TRUE(started.ok()) << started;
  const absl::StatusOr<PolicyChecksums> before = Checksums();
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_TRUE(before->lora.empty());
  const absl::Status warmed = WarmStart();
  ASSERT_TRUE(warmed.ok()) << warmed;
  const absl::StatusOr<PolicyChecksums> warm = Checksums();
  ASSERT_TRUE(warm.ok()) << warm.status();
  const absl::Status fitted = Fit();
  ASSERT_TRUE(fitted.ok()) << fitted;
  const absl::StatusOr<PolicyChecksums> after = Checksums();
  ASSERT_TRUE(after.ok()) << after.status();
  // Full fine-tuning moves every weight (embeddings, norms, linear layers) in each phase.
  EXPECT_EQ(Changed(before->base, warm->base).size(), before->base.size());
  EXPECT_EQ(Changed(warm->base, after->base).size(), before->base.size());
}

}  // namespace
}  // namespace rollout
