#include "models/value_model.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "common/file_util.h"
#include "models/safetensors.h"
#include "tests/support/temp_dir.h"

namespace rollout::models {
namespace {

using ::rollout::testing::TempDir;

constexpr char kFixture[] = "tests/data/tiny-qwen2";

at::Tensor ValuesOf(const ValueModel& model) {
  c10::NoGradGuard no_grad;
  const at::Tensor ids = at::tensor({3, 17, 250, 9, 41, 100}, at::kLong).view({2, 3});
  return model.Values(ids, at::arange(3, at::kLong).expand({2, 3}), at::Tensor());
}

TEST(ValueModel, StartsFromACausalLmWithASeededHead) {
  std::unique_ptr<ValueModel> a = ValueModel::Load(kFixture, LoadOptions(), 4).value();
  std::unique_ptr<ValueModel> b = ValueModel::Load(kFixture, LoadOptions(), 4).value();
  std::unique_ptr<ValueModel> c = ValueModel::Load(kFixture, LoadOptions(), 5).value();
  const at::Tensor values = ValuesOf(*a);
  EXPECT_EQ(values.sizes(), at::IntArrayRef({2, 3}));
  EXPECT_EQ(values.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::equal(values, ValuesOf(*b)));
  EXPECT_FALSE(at::equal(values, ValuesOf(*c)));
  for (auto& [name, param] : a->NamedParameters()) EXPECT_NE(name, "lm_head.weight");
}

TEST(ValueModel, SavedAndReloadedGivesTheSameValues) {
  std::unique_ptr<ValueModel> model = ValueModel::Load(kFixture, LoadOptions(), 4).value();
  TempDir dir("value_model");
  ASSERT_TRUE(model->Save(dir.path()).ok());
  absl::StatusOr<std::unique_ptr<ValueModel>> reloaded =
      ValueModel::Load(dir.path(), LoadOptions(), /*seed=*/99);  // the saved head wins
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  EXPECT_EQ((*reloaded)->backbone().config().head, "value");
  EXPECT_TRUE(at::equal(ValuesOf(**reloaded), ValuesOf(*model)));
}

// A reward model as HF writes XForSequenceClassification: the same score head without a
// bias. It loads as a value model whose head is the reward model's, with a zero bias.
TEST(ValueModel, LoadsARewardModelsHeadWithAZeroBias) {
  std::unique_ptr<ValueModel> model = ValueModel::Load(kFixture, LoadOptions(), 4).value();
  for (auto& [name, param] : model->NamedParameters()) {
    c10::NoGradGuard no_grad;
    if (name == "score.bias") param->fill_(0.5);  // the value model's own bias, to drop
  }
  TempDir dir("reward_model");
  ASSERT_TRUE(model->Save(dir.path()).ok());
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  at::Tensor bias;
  {
    std::unique_ptr<SafetensorsReader> reader = SafetensorsReader::OpenDirectory(dir.path()).value();
    for (const std::string& name : reader->NamesInFileOrder()) {
      const at::Tensor tensor = reader->Load(name).value();
      if (name == "score.bias") {
        bias = tensor;
      } else {
        tensors.emplace_back(name, tensor);
      }
    }
  }
  ASSERT_TRUE(bias.defined());
  ASSERT_EQ(bias.item<float>(), 0.5f);
  ASSERT_TRUE(WriteSafetensors(dir.Path("model.safetensors"), tensors, {{"format", "pt"}}).ok());
  std::string config = ReadFile(dir.Path("config.json")).value();
  const size_t at = config.find("ForTokenClassification");
  ASSERT_NE(at, std::string::npos);
  config.replace(at, std::string("ForTokenClassification").size(), "ForSequenceClassification");
  ASSERT_TRUE(WriteFileAtomically(dir.Path("config.json"), config).ok());

  absl::StatusOr<std::unique_ptr<ValueModel>> reward_model = ValueModel::Load(dir.path(), LoadOptions(), 99);
  ASSERT_TRUE(reward_model.ok()) << reward_model.status();
  EXPECT_EQ((*reward_model)->backbone().config().head, "value");
  EXPECT_TRUE(at::allclose(ValuesOf(**reward_model), ValuesOf(*model) - bias.item<float>(), 1e-5, 1e-6));
}

TEST(ValueModel, GradientsReachHeadAndBackbone) {
  std::unique_ptr<ValueModel> model = ValueModel::Load(kFixture, LoadOptions(), 4).value();
  for (auto& [name, param] : model->NamedParameters()) param->set_requires_grad(true);
  const at::Tensor ids = at::tensor({3, 17, 250}, at::kLong).view({1, 3});
  model->Values(ids, at::arange(3, at::kLong).view({1, 3}), at::Tensor()).sum().backward();
  for (auto& [name, param] : model->NamedParameters()) {
    EXPECT_TRUE(param->grad().defined()) << name;
  }
}

}  // namespace
}  // namespace rollout::models
