// CausalLM with Qwen3's per-head query/key RMSNorm (TransformerConfig::qk_norm), on a
// tiny random model. Parity with HF's Qwen3ForCausalLM is checked on the GPU host by
// tests/hf/check_hf_parity.py (export_for_hf writes a Qwen3 model).
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/file_util.h"
#include "models/causal_lm.h"
#include "models/kv_cache.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tiny_qwen3.h"

namespace rollout::models {
namespace {

using ::rollout::testing::TempDir;
using ::testing::HasSubstr;

std::unique_ptr<CausalLM> RandomQwen3(uint64_t seed) {
  return testing::RandomQwen3(testing::TinyQwen3Config(300, /*head_dim=*/32), seed, LoadOptions());
}

at::Tensor Hidden(const CausalLM& model) {
  c10::NoGradGuard no_grad;
  const at::Tensor ids = at::tensor({3, 17, 250, 42, 9, 120, 77, 5}, at::kLong).unsqueeze(0);
  return model.Forward(ids, at::arange(8, at::kLong).unsqueeze(0), at::Tensor())[0];
}

at::Tensor* Parameter(CausalLM& model, const std::string& name) {
  for (auto& [param_name, tensor] : model.NamedParameters()) {
    if (param_name == name) return tensor;
  }
  ADD_FAILURE() << "no parameter " << name;
  return nullptr;
}

TEST(Qwen3, EachLayerHasQueryAndKeyNormsOfHeadDim) {
  std::unique_ptr<CausalLM> model = RandomQwen3(1);
  int norms = 0;
  for (const auto& [name, tensor] : model->NamedParameters()) {
    if (name.find("self_attn.q_norm.weight") != std::string::npos ||
        name.find("self_attn.k_norm.weight") != std::string::npos) {
      EXPECT_EQ(tensor->sizes(), at::IntArrayRef({32})) << name;
      ++norms;
    }
    EXPECT_EQ(name.find("_proj.bias"), std::string::npos) << name;
  }
  EXPECT_EQ(norms, 4);
}

// The norms make a head's attention blind to the scale of its query and key: scaling
// one head's q_proj rows (or all of k_proj) leaves the output as it was, which it would
// not without them.
TEST(Qwen3, QueryAndKeyScalesCancelPerHead) {
  std::unique_ptr<CausalLM> model = RandomQwen3(2);
  const at::Tensor before = Hidden(*model);
  {
    c10::NoGradGuard no_grad;
    Parameter(*model, "model.layers.0.self_attn.q_proj.weight")->narrow(0, 32, 32).mul_(3.0);
    Parameter(*model, "model.layers.1.self_attn.k_proj.weight")->mul_(2.0);
  }
  const at::Tensor after = Hidden(*model);
  EXPECT_LT((after - before).abs().max().item<float>(), 1e-4);

  TransformerConfig plain = testing::TinyQwen3Config(300, /*head_dim=*/32);
  plain.qk_norm = false;
  std::unique_ptr<CausalLM> without = CausalLM::RandomInit(plain, 2, LoadOptions());
  const at::Tensor unscaled = Hidden(*without);
  {
    c10::NoGradGuard no_grad;
    Parameter(*without, "model.layers.0.self_attn.q_proj.weight")->narrow(0, 32, 32).mul_(3.0);
  }
  EXPECT_GT((Hidden(*without) - unscaled).abs().max().item<float>(), 1e-3);
}

TEST(Qwen3, NormWeightsChangeTheOutput) {
  std::unique_ptr<CausalLM> model = RandomQwen3(3);
  const at::Tensor before = Hidden(*model);
  {
    c10::NoGradGuard no_grad;
    Parameter(*model, "model.layers.0.self_attn.k_norm.weight")->mul_(2.0);
  }
  EXPECT_GT((Hidden(*model) - before).abs().max().item<float>(), 1e-3);
}

TEST(Qwen3, IncrementalForwardEqualsFullForward) {
  std::unique_ptr<CausalLM> model = RandomQwen3(4);
  const at::Tensor full = Hidden(*model);
  const TransformerConfig& c = model->config();
  c10::NoGradGuard no_grad;
  const at::Tensor ids = at::tensor({3, 17, 250, 42, 9, 120, 77, 5}, at::kLong);
  DenseKvCache cache(c.num_hidden_layers, 1, c.num_key_value_heads, c.head_dim, 8,
                     at::TensorOptions());
  cache.BeginStep(5);
  std::vector<at::Tensor> steps = {model->ForwardStep(ids.narrow(0, 0, 5), at::arange(5, at::kLong), cache)};
  for (int64_t i = 5; i < 8; ++i) {
    cache.BeginStep(1);
    steps.push_back(model->ForwardStep(ids.narrow(0, i, 1), at::tensor({i}, at::kLong), cache));
  }
  EXPECT_TRUE(at::allclose(at::cat(steps), full, 1e-5, 1e-5));
}

TEST(Qwen3, SavedModelReloadsAsQwen3WithItsNorms) {
  std::unique_ptr<CausalLM> model = RandomQwen3(5);
  TempDir dir("qwen3_model");
  ASSERT_TRUE(model->Save(dir.path()).ok());
  EXPECT_THAT(ReadFile(dir.Path("config.json")).value(), HasSubstr("Qwen3ForCausalLM"));
  absl::StatusOr<std::unique_ptr<CausalLM>> reloaded = CausalLM::Load(dir.path(), LoadOptions());
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  EXPECT_TRUE((*reloaded)->config().qk_norm);
  EXPECT_EQ((*reloaded)->config().head_dim, 32);
  EXPECT_TRUE(at::equal(Hidden(**reloaded), Hidden(*model)));
}

}  // namespace
}  // namespace rollout::models
