// A role's checkpoint files (workers/checkpoint_io.h) on plain tensors: the optimizer
// state round-trips exactly, a tensor that never had a gradient stays without state,
// the update count and random stream come back, and missing or mismatched contents
// are clear errors.
#include "workers/checkpoint_io.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/file_util.h"
#include "models/safetensors.h"
#include "tests/support/temp_dir.h"

namespace rollout::workers {
namespace {

using ::testing::HasSubstr;

CheckpointParts Parts(bool model, bool optimizer, bool extra) {
  CheckpointParts parts;
  parts.model = model;
  parts.optimizer = optimizer;
  parts.extra = extra;
  return parts;
}

// Two trainable tensors, "a" and "b", with their optimizer and update counter.
struct Learner {
  explicit Learner(uint64_t seed, at::ScalarType dtype = at::kFloat) {
    at::manual_seed(seed);
    a = at::randn({3, 2}).to(dtype).set_requires_grad(true);
    b = at::randn({4}).to(dtype).set_requires_grad(true);
    optimizer = std::make_unique<AdamW>(std::vector<at::Tensor*>{&a, &b}, AdamWOptions());
  }
  RoleCheckpoint Checkpoint() {
    RoleCheckpoint role;
    role.optimizer = optimizer.get();
    role.trainable_names = {"a", "b"};
    role.updates = &updates;
    role.save_model = [this](const std::string& dir) {
      return SaveNamedTensors(JoinPath(dir, kModelFile), {{"a", &a}, {"b", &b}});
    };
    role.load_model = [this](const std::string& dir) {
      return LoadNamedTensors(JoinPath(dir, kModelFile), {{"a", &a}, {"b", &b}});
    };
    return role;
  }
  // One optimizer step with gradient `grad_a` on a and, when defined, `grad_b` on b.
  void Step(const at::Tensor& grad_a, const at::Tensor& grad_b) {
    a.mutable_grad() = grad_a.clone();
    if (grad_b.defined()) b.mutable_grad() = grad_b.clone();
    optimizer->Step();
    optimizer->ZeroGrad();
  }

  at::Tensor a;
  at::Tensor b;
  std::unique_ptr<AdamW> optimizer;
  int64_t updates = 0;
};

TEST(CheckpointIo, ATensorThatNeverHadAGradientRoundTripsWithoutOptimizerState) {
  testing::TempDir dir("ckpt_io");
  Learner trained(1);
  trained.Step(at::full({3, 2}, 0.5), at::Tensor());  // b gets no gradient
  trained.Step(at::full({3, 2}, -0.25), at::Tensor());
  ASSERT_TRUE(SaveRoleCheckpoint(trained.Checkpoint(), Parts(true, true, false), dir.path()).ok());
  const auto reader = models::SafetensorsReader::OpenFile(dir.Path(kOptimizerFile)).value();
  EXPECT_THAT(reader->Names(), ::testing::ElementsAre("a.exp_avg", "a.exp_avg_sq", "a.step"));

  Learner restored(2);
  ASSERT_TRUE(LoadRoleCheckpoint(restored.Checkpoint(), Parts(true, true, false), dir.path()).ok());
  EXPECT_TRUE(at::equal(restored.a, trained.a));
  EXPECT_TRUE(at::equal(restored.optimizer->states()[0].exp_avg, trained.optimizer->states()[0].exp_avg));
  EXPECT_TRUE(at::equal(restored.optimizer->states()[0].exp_avg_sq, trained.optimizer->states()[0].exp_avg_sq));
  EXPECT_EQ(restored.optimizer->states()[0].step.item<float>(), 2);
  EXPECT_FALSE(restored.optimizer->states()[1].step.defined());
  // b's first step, after the resume as without one: bias correction from step 1.
  for (Learner* learner : {&trained, &restored}) learner->Step(at::full({3, 2}, 1.0), at::full({4}, 2.0));
  EXPECT_TRUE(at::equal(restored.a, trained.a));
  EXPECT_TRUE(at::equal(restored.b, trained.b));
  EXPECT_EQ(restored.optimizer->states()[1].step.item<float>(), 1);
}

// A bfloat16 tensor's float32 master goes into the optimizer file, so a resumed run steps
// on from the same float32 weights as one without the interruption (from the rounded
// weights alone its updates of lr 1e-6 would drift from the uninterrupted run's).
TEST(CheckpointIo, ABfloat16TensorsMasterRoundTrips) {
  testing::TempDir dir("ckpt_io_master");
  Learner trained(5, at::kBFloat16);
  auto grads = [](int step) {
    at::manual_seed(100 + step);
    return std::make_pair(at::randn({3, 2}).to(at::kBFloat16), at::randn({4}).to(at::kBFloat16));
  };
  for (int step = 0; step < 2; ++step) trained.Step(grads(step).first, grads(step).second);
  ASSERT_TRUE(SaveRoleCheckpoint(trained.Checkpoint(), Parts(true, true, false), dir.path()).ok());
  const auto reader = models::SafetensorsReader::OpenFile(dir.Path(kOptimizerFile)).value();
  EXPECT_THAT(reader->Names(), ::testing::IsSupersetOf({"a.master", "b.master"}));

  Learner restored(6, at::kBFloat16);
  ASSERT_TRUE(LoadRoleCheckpoint(restored.Checkpoint(), Parts(true, true, false), dir.path()).ok());
  for (int step = 2; step < 5; ++step) {
    for (Learner* learner : {&trained, &restored}) learner->Step(grads(step).first, grads(step).second);
  }
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(restored.optimizer->states()[i].master.scalar_type(), at::kFloat);
    EXPECT_TRUE(at::equal(restored.optimizer->states()[i].master, trained.optimizer->states()[i].master)) << i;
  }
  EXPECT_TRUE(at::equal(restored.a, trained.a));
  EXPECT_TRUE(at::equal(restored.b, trained.b));
}

TEST(CheckpointIo, ExtraRestoresTheUpdateCountAndTheRandomStream) {
  testing::TempDir dir("ckpt_io_extra");
  Learner learner(3);
  learner.updates = 7;
  ASSERT_TRUE(SaveRoleCheckpoint(learner.Checkpoint(), Parts(false, false, true), dir.path()).ok());
  const at::Tensor after_save = at::rand({5});
  learner.updates = 0;
  ASSERT_TRUE(LoadRoleCheckpoint(learner.Checkpoint(), Parts(false, false, true), dir.path()).ok());
  EXPECT_EQ(learner.updates, 7);
  EXPECT_TRUE(at::equal(at::rand({5}), after_save));
}

TEST(CheckpointIo, APartTheCheckpointWasSavedWithoutIsAFailedPrecondition) {
  testing::TempDir dir("ckpt_io_missing");
  Learner learner(4);
  ASSERT_TRUE(SaveRoleCheckpoint(learner.Checkpoint(), Parts(true, false, false), dir.path()).ok());
  const absl::Status status = LoadRoleCheckpoint(learner.Checkpoint(), Parts(true, true, false), dir.path());
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr(kOptimizerFile));
  EXPECT_THAT(status.message(), HasSubstr("saved without 'optimizer'"));
}

// The model part writes huggingface/'s small files, hf_model adds the weights there.
TEST(CheckpointIo, TheModelPartWritesTheHfConfigAndHfModelAddsTheWeights) {
  const auto saved = [](bool model, bool hf_model) {
    testing::TempDir dir("ckpt_io_hf");
    Learner learner(6);
    RoleCheckpoint role = learner.Checkpoint();
    role.save_hf_config = [](const std::string& hf) {
      return WriteFileDurably(JoinPath(hf, "config.json"), "{}");
    };
    role.save_hf_model = [](const std::string& hf) {
      return WriteFileDurably(JoinPath(hf, "w"), "w");
    };
    CheckpointParts parts = Parts(model, false, false);
    parts.hf_model = hf_model;
    EXPECT_TRUE(SaveRoleCheckpoint(role, parts, dir.path()).ok());
    const absl::StatusOr<std::vector<std::string>> names = ListDirectory(dir.Path(kHfModelDir));
    return names.ok() ? *names : std::vector<std::string>{};
  };
  EXPECT_THAT(saved(true, false), ::testing::ElementsAre("config.json"));
  EXPECT_THAT(saved(false, true), ::testing::ElementsAre("config.json", "w"));
  EXPECT_THAT(saved(true, true), ::testing::ElementsAre("config.json", "w"));
  EXPECT_THAT(saved(false, false), ::testing::IsEmpty());
}

TEST(CheckpointIo, HfConfigFilesAreTheModelsConfigGenerationConfigAndTokenizer) {
  constexpr char kFixture[] = "tests/data/tiny-qwen2";
  testing::TempDir dir("ckpt_io_hf_files");
  const models::TransformerConfig config = models::LoadHfConfig(kFixture).value();
  ASSERT_TRUE(SaveHfConfigFiles(config, kFixture, kFixture, dir.path()).ok());
  EXPECT_THAT(ListDirectory(dir.path()).value(),
              ::testing::ElementsAre("chat_template.jinja", "config.json", "generation_config.json",
                                     "tokenizer.json", "tokenizer_config.json"));
  EXPECT_EQ(ReadFile(dir.Path("config.json")).value(), models::HfConfigJson(config));
  EXPECT_EQ(ReadFile(dir.Path("generation_config.json")).value(),
            ReadFile(JoinPath(kFixture, "generation_config.json")).value());
  testing::TempDir bare("ckpt_io_hf_bare");  // a model without a generation config
  const std::string model_dir = bare.Write("model/config.json", models::HfConfigJson(config));
  ASSERT_TRUE(SaveHfConfigFiles(config, Dirname(model_dir), kFixture, bare.path()).ok());
  EXPECT_FALSE(ReadFile(bare.Path("generation_config.json")).ok());
}

TEST(CheckpointIo, UnknownPartsAndContentsThatDoNotFitAreClearErrors) {
  google::protobuf::RepeatedPtrField<std::string> names;
  names.Add("model");
  names.Add("weights");
  const absl::Status unknown = ParseCheckpointParts(names, "actor.checkpoint.save_contents").status();
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.message(),
              HasSubstr("actor.checkpoint.save_contents: 'weights' is not a checkpoint part"));

  testing::TempDir dir("ckpt_io_bad");
  at::Tensor small = at::zeros({2});
  at::Tensor other = at::zeros({2});
  ASSERT_TRUE(SaveNamedTensors(dir.Path("t.safetensors"), {{"x", &small}, {"y", &other}}).ok());
  at::Tensor wide = at::zeros({3});
  EXPECT_EQ(LoadNamedTensors(dir.Path("t.safetensors"), {{"x", &wide}, {"y", &other}}).code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(LoadNamedTensors(dir.Path("t.safetensors"), {{"z", &small}}).code(), absl::StatusCode::kDataLoss);
  const absl::Status extra = LoadNamedTensors(dir.Path("t.safetensors"), {{"x", &small}});
  EXPECT_EQ(extra.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(extra.message(), HasSubstr("holds y, which the model does not have"));

  Learner learner(5);
  dir.Write(kExtraStateFile, "{\"updates\": 3");
  const absl::Status corrupt = LoadRoleCheckpoint(learner.Checkpoint(), Parts(false, false, true), dir.path());
  EXPECT_EQ(corrupt.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(corrupt.message(), HasSubstr(kExtraStateFile));

  Batch no_dir;
  EXPECT_THAT(CheckpointDirOf(no_dir, "actor.save_checkpoint").status().message(),
              HasSubstr("actor.save_checkpoint: meta 'dir'"));
}

// Every tensor is checked before any is written: a model file that does not fit leaves
// the model as it was; one that fits fills every tensor.
TEST(CheckpointIo, AModelFileThatDoesNotFitChangesNoTensor) {
  testing::TempDir dir("ckpt_io_unchanged");
  const std::string path = dir.Path("t.safetensors");
  at::Tensor x = at::ones({2}), y = at::full({3}, 2.0), z = at::full({1}, 3.0);
  ASSERT_TRUE(SaveNamedTensors(path, {{"x", &x}, {"y", &y}, {"z", &z}}).ok());
  at::Tensor model_x = at::zeros({2}), model_y = at::zeros({3}), model_z = at::zeros({1});
  at::Tensor wide_y = at::zeros({4});
  EXPECT_EQ(LoadNamedTensors(path, {{"x", &model_x}, {"y", &wide_y}, {"z", &model_z}}).code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(LoadNamedTensors(path, {{"x", &model_x}, {"y", &model_y}}).code(),
            absl::StatusCode::kInvalidArgument);  // z: not the model's
  for (const at::Tensor* t : {&model_x, &model_y, &model_z, &wide_y}) {
    EXPECT_EQ(t->abs().sum().item<float>(), 0.f);
  }
  ASSERT_TRUE(LoadNamedTensors(path, {{"x", &model_x}, {"y", &model_y}, {"z", &model_z}}).ok());
  EXPECT_TRUE(at::equal(model_x, x));
  EXPECT_TRUE(at::equal(model_y, y));
  EXPECT_TRUE(at::equal(model_z, z));
}

}  // namespace
}  // namespace rollout::workers
