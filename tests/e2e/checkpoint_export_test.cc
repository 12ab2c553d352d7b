// `rollout ckpt export` on the checkpoints of real two-step GRPO runs (tiny Qwen2
// fixture, CPU, worker processes), one full-weight and one LoRA:
//  * the full-weight export loads with models::CausalLM and gives exactly the logits
//    of the checkpoint's weights, whichever way PATH names the checkpoint;
//  * the merged LoRA export gives the logits of the base model with the checkpoint's
//    adapter applied; --adapter writes the PEFT files alone;
//  * a full-weight checkpoint without hf_model still has its HF config, and export
//    refuses a non-empty OUT and --adapter on a full-weight checkpoint.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/file_util.h"
#include "models/causal_lm.h"
#include "models/lora.h"
#include "models/safetensors.h"
#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using testing::CommandResult;
using testing::RolloutIn;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kSource = ROLLOUT_SOURCE_DIR;
const std::string kFixture = kSource + "/tests/data/tiny-qwen2";

// Two GRPO steps on the tiny fixture, saved at step 2 into ckpt/<name>.
std::vector<std::string> TrainArgs(const std::string& name, const std::vector<std::string>& keys) {
  std::vector<std::string> args = {
      "train", kSource + "/recipes/grpo_arith.yaml", "data.train_files=[data/letters.jsonl]",
      "data.val_files=[]", "actor.model.path=" + kFixture, "trainer.device=cpu",
      "trainer.logger=[console]", "trainer.default_local_dir=ckpt/" + name,
      "trainer.total_training_steps=2", "trainer.save_freq=2", "data.train_batch_size=4",
      "actor.ppo_mini_batch_size=2", "actor.ppo_micro_batch_size_per_gpu=2", "rollout.n=2",
      "rollout.cpu_kv_cache_gib=0.05", "data.max_response_length=8", "reward.name=null",
      std::string("reward.plugin=") + MISBEHAVING_PLUGIN_PATH};
  args.insert(args.end(), keys.begin(), keys.end());
  return args;
}

std::unique_ptr<models::CausalLM> LoadModel(const std::string& dir) {
  return models::CausalLM::Load(dir, models::LoadOptions()).value();
}

// [1, 6, V] float32 logits of a fixed sequence.
at::Tensor Logits(const models::CausalLM& model) {
  c10::NoGradGuard no_grad;
  const at::Tensor ids = at::tensor({3, 17, 250, 9, 41, 100}, at::kLong).view({1, 6});
  return model.Logits(model.Forward(ids, at::arange(6, at::kLong).view({1, 6}), at::Tensor()));
}

// The fixture's architecture with the weights of a checkpoint's model.safetensors,
// copied into its parameters: they stay views of the fused q/k/v and gate/up weights,
// so the forward multiplies as a loaded model's does (other products may round
// differently, depending on the BLAS).
std::unique_ptr<models::CausalLM> CheckpointModel(const std::string& actor_dir) {
  std::unique_ptr<models::CausalLM> model = LoadModel(kFixture);
  const auto reader = models::SafetensorsReader::OpenFile(JoinPath(actor_dir, "model.safetensors")).value();
  c10::NoGradGuard no_grad;
  for (auto& [name, param] : model->NamedParameters()) param->copy_(reader->Load(name).value());
  return model;
}

CommandResult Export(const std::string& cwd, const std::vector<std::string>& args) {
  std::vector<std::string> command = {"ckpt", "export"};
  command.insert(command.end(), args.begin(), args.end());
  return RolloutIn(cwd, command);
}

class CheckpointExport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir("ckpt_export_e2e");
    dir_->Write("data/letters.jsonl", testing::LetterRows());
    for (const auto& [name, keys] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"full", {}},
             {"lora", {"actor.model.lora_rank=4", "actor.model.lora_alpha=8", "actor.optim.lr=1e-3"}}}) {
      const CommandResult run = RolloutIn(dir_->path(), TrainArgs(name, keys));
      ASSERT_EQ(run.exit_code, 0) << run.output;
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static std::string Path(const std::string& name) { return dir_->Path(name); }
  static std::string Actor(const std::string& run) { return Path("ckpt/" + run + "/global_step_2/actor"); }

  static testing::TempDir* dir_;
};

testing::TempDir* CheckpointExport::dir_ = nullptr;

TEST_F(CheckpointExport, ACheckpointWithoutHfModelStillHasItsHfConfig) {
  for (const char* file : {"config.json", "generation_config.json", "tokenizer.json"}) {
    EXPECT_TRUE(ReadFile(JoinPath(Actor("full") + "/huggingface", file)).ok()) << file;
  }
  EXPECT_FALSE(ReadFile(Actor("full") + "/huggingface/model.safetensors").ok());
}

TEST_F(CheckpointExport, AFullWeightExportGivesTheCheckpointsLogitsExactly) {
  const CommandResult result = Export(dir_->path(), {"ckpt/full", "--hf", "out/full"});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("exported ckpt/full/global_step_2 to out/full"));
  for (const char* file :
       {"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json"}) {
    EXPECT_TRUE(ReadFile(JoinPath(Path("out/full"), file)).ok()) << file;
  }
  const auto weights = models::SafetensorsReader::OpenFile(Path("out/full/model.safetensors")).value();
  EXPECT_EQ(weights->Metadata().at("format"), "pt");  // transformers asks for it

  const at::Tensor expected = Logits(*CheckpointModel(Actor("full")));
  ASSERT_FALSE(at::equal(expected, Logits(*LoadModel(kFixture)))) << "training changed nothing";
  EXPECT_TRUE(at::equal(Logits(*LoadModel(Path("out/full"))), expected));
}

TEST_F(CheckpointExport, PathMayNameTheCheckpointItsActorDirectoryOrTheRoot) {
  ASSERT_EQ(Export(dir_->path(), {"ckpt/full", "--hf", "out/by_root"}).exit_code, 0);
  const std::string expected = ReadFile(Path("out/by_root/model.safetensors")).value();
  const std::pair<std::string, std::string> cases[] = {
      {Path("ckpt/full/global_step_2"), Path("out/by_checkpoint")},
      {Actor("full") + "/", Path("out/by_actor")}};
  for (const auto& [path, out] : cases) {
    const CommandResult result = Export(dir_->path(), {path, "--hf", out});
    ASSERT_EQ(result.exit_code, 0) << result.output;
    EXPECT_TRUE(ReadFile(out + "/model.safetensors").value() == expected) << path;
  }
}

TEST_F(CheckpointExport, AMergedLoraExportEqualsTheBaseWithTheAdapterApplied) {
  const CommandResult result = Export(dir_->path(), {"ckpt/lora", "--hf", "out/merged"});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::unique_ptr<models::CausalLM> adapted = LoadModel(kFixture);
  ASSERT_TRUE(models::LoadLoraAdapter(*adapted, Actor("lora") + "/lora_adapter").ok());
  const at::Tensor expected = Logits(*adapted);
  const at::Tensor base = Logits(*LoadModel(kFixture));
  ASSERT_GT((expected - base).abs().max().item<double>(), 1e-5) << "the adapter changes nothing";
  const at::Tensor merged = Logits(*LoadModel(Path("out/merged")));
  EXPECT_TRUE(at::allclose(merged, expected, /*rtol=*/1e-5, /*atol=*/1e-5))
      << "max |diff| " << (merged - expected).abs().max().item<double>();
}

TEST_F(CheckpointExport, AdapterWritesThePeftFilesAlone) {
  const CommandResult result = Export(dir_->path(), {"ckpt/lora", "--hf", "out/adapter", "--adapter"});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(ListDirectory(Path("out/adapter")).value(),
              ElementsAre("adapter_config.json", "adapter_model.safetensors"));
  for (const char* file : {"adapter_config.json", "adapter_model.safetensors"}) {
    EXPECT_TRUE(ReadFile(JoinPath(Path("out/adapter"), file)).value() ==
                ReadFile(JoinPath(Actor("lora") + "/lora_adapter", file)).value())
        << file;
  }
}

TEST_F(CheckpointExport, RefusesANonEmptyOutAndAnAdapterOfAFullWeightRun) {
  dir_->Write("out/taken/notes.txt", "mine");
  CommandResult result = Export(dir_->path(), {"ckpt/full", "--hf", "out/taken"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr("rollout ckpt export: out/taken exists and is not empty"));
  EXPECT_EQ(ReadFile(Path("out/taken/notes.txt")).value(), "mine");

  result = Export(dir_->path(), {"ckpt/full", "--hf", "out/none", "--adapter"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.output, HasSubstr("is a full-weight checkpoint (no lora_adapter/)"));
  const std::vector<std::string> outputs = ListDirectory(Path("out")).value();
  for (const std::string& name : outputs) {
    EXPECT_THAT(name, ::testing::Not(::testing::StartsWith("none"))) << "no output, no scratch left";
  }
}

}  // namespace
}  // namespace rollout
