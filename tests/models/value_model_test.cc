#include "models/value_model.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

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
