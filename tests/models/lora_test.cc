#include "models/lora.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/file_util.h"
#include "tests/support/temp_dir.h"

namespace rollout::models {
namespace {

using ::rollout::testing::TempDir;
using ::testing::HasSubstr;

constexpr char kFixture[] = "tests/data/tiny-qwen2";

std::unique_ptr<CausalLM> Fixture() { return CausalLM::Load(kFixture, LoadOptions()).value(); }

at::Tensor Logits(const CausalLM& model) {
  c10::NoGradGuard no_grad;
  const at::Tensor ids = at::tensor({3, 17, 250, 9, 41, 100}, at::kLong).view({1, 6});
  return model.Logits(model.Forward(ids, at::arange(6, at::kLong).view({1, 6}), at::Tensor()));
}

LoraConfig Config(std::vector<std::string> targets = {"all-linear"}) {
  LoraConfig config;
  config.options.rank = 4;
  config.options.alpha = 8;
  config.target_modules = std::move(targets);
  return config;
}

// Gives every B a value so the adapters change the output.
void PerturbAdapters(CausalLM& model) {
  c10::NoGradGuard no_grad;
  for (auto& [name, tensor] : NamedLoraParameters(model)) {
    if (name.find("lora_B") != std::string::npos) tensor->normal_(0, 0.05);
  }
}

TEST(Lora, FreshAdaptersChangeNothing) {
  std::unique_ptr<CausalLM> model = Fixture();
  const at::Tensor before = Logits(*model);
  ASSERT_TRUE(AddLoraAdapters(*model, Config(), 1).ok());
  EXPECT_TRUE(at::equal(Logits(*model), before));
  EXPECT_EQ(NamedLoraParameters(*model).size(), 2u * 7 * 2);  // A and B, 7 linears, 2 layers
}

TEST(Lora, TargetsOnlyNamedModules) {
  std::unique_ptr<CausalLM> model = Fixture();
  ASSERT_TRUE(AddLoraAdapters(*model, Config({"q_proj", "v_proj"}), 1).ok());
  const auto params = NamedLoraParameters(*model);
  EXPECT_EQ(params.size(), 2u * 2 * 2);
  EXPECT_EQ(params[0].first, "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight");
  EXPECT_EQ(params[0].second->sizes(), at::IntArrayRef({4, 64}));
}

// exclude_modules as PEFT's string: a regular expression over the whole module name.
TEST(Lora, ExcludedModulesGetNoAdapter) {
  std::unique_ptr<CausalLM> model = Fixture();
  LoraConfig config = Config({"q_proj", "v_proj"});
  config.exclude_modules = R"(.*\.layers\.0\..*|.*v_proj)";
  ASSERT_TRUE(AddLoraAdapters(*model, config, 1).ok());
  const auto params = NamedLoraParameters(*model);
  ASSERT_EQ(params.size(), 2u);  // layer 1's q_proj, A and B
  EXPECT_EQ(params[0].first, "base_model.model.model.layers.1.self_attn.q_proj.lora_A.weight");

  config.exclude_modules = "q_proj";  // matched whole: no module is named just that
  std::unique_ptr<CausalLM> whole = Fixture();
  ASSERT_TRUE(AddLoraAdapters(*whole, config, 1).ok());
  EXPECT_EQ(NamedLoraParameters(*whole).size(), 2u * 2 * 2);
}

TEST(Lora, ExcludingEverythingOrABadPatternIsAnError) {
  LoraConfig config = Config({"q_proj"});
  config.exclude_modules = ".*";
  EXPECT_THAT(AddLoraAdapters(*Fixture(), config, 1).message(),
              HasSubstr("LoRA exclude_modules '.*' excludes every module target_modules names"));
  config.exclude_modules = "(q_proj";
  EXPECT_THAT(AddLoraAdapters(*Fixture(), config, 1).message(),
              HasSubstr("LoRA exclude_modules '(q_proj' is not a regular expression"));
}

// Saved for PEFT as given; PEFT's list form, read from an adapter_config.json, excludes
// the modules named whole or by their last parts.
TEST(Lora, ExcludeModulesRoundTripAndTheListFormIsRead) {
  std::unique_ptr<CausalLM> model = Fixture();
  LoraConfig config = Config({"q_proj", "o_proj"});
  config.exclude_modules = R"(.*\.layers\.1\..*)";
  ASSERT_TRUE(AddLoraAdapters(*model, config, 1).ok());
  PerturbAdapters(*model);
  TempDir dir("lora_exclude");
  ASSERT_TRUE(SaveLoraAdapter(*model, config, dir.path(), kFixture).ok());
  std::unique_ptr<CausalLM> other = Fixture();
  absl::StatusOr<LoraConfig> loaded = LoadLoraAdapter(*other, dir.path());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->exclude_modules, config.exclude_modules);
  EXPECT_EQ(NamedLoraParameters(*other).size(), 4u);
  EXPECT_TRUE(at::equal(Logits(*other), Logits(*model)));

  std::string json = ReadFile(dir.Path("adapter_config.json")).value();
  const std::string saved = R"("exclude_modules": ".*\\.layers\\.1\\..*")";
  ASSERT_NE(json.find(saved), std::string::npos) << json;
  json.replace(json.find(saved), saved.size(), R"("exclude_modules": ["layers.1.self_attn.q_proj", "o_proj"])");
  ASSERT_TRUE(WriteFileAtomically(dir.Path("adapter_config.json"), json).ok());
  std::unique_ptr<CausalLM> listed = Fixture();
  loaded = LoadLoraAdapter(*listed, dir.path());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->exclude_modules, R"((.*\.)?(layers\.1\.self_attn\.q_proj|o_proj))");
  const auto params = NamedLoraParameters(*listed);
  ASSERT_EQ(params.size(), 2u);  // layer 0's q_proj only
  EXPECT_EQ(params[0].first, "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight");
}

TEST(Lora, UnknownTargetAndBadRankAreErrors) {
  std::unique_ptr<CausalLM> model = Fixture();
  absl::Status status = AddLoraAdapters(*model, Config({"qkv"}), 1);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("'qkv' matches no layer"));
  LoraConfig zero = Config();
  zero.options.rank = 0;
  EXPECT_FALSE(AddLoraAdapters(*model, zero, 1).ok());
}

TEST(Lora, DisabledAdaptersGiveTheBaseModel) {
  std::unique_ptr<CausalLM> model = Fixture();
  const at::Tensor base = Logits(*model);
  ASSERT_TRUE(AddLoraAdapters(*model, Config(), 1).ok());
  PerturbAdapters(*model);
  EXPECT_FALSE(at::allclose(Logits(*model), base));
  {
    ScopedAdaptersDisabled disabled(*model);
    EXPECT_TRUE(at::equal(Logits(*model), base));
  }
  EXPECT_FALSE(at::allclose(Logits(*model), base));
}

TEST(Lora, MergeMatchesAdaptersAndUnmergeRestoresBaseBitForBit) {
  std::unique_ptr<CausalLM> model = Fixture();
  std::vector<at::Tensor> base_weights;
  for (auto& [name, param] : model->NamedParameters()) base_weights.push_back(param->clone());
  const at::Tensor base = Logits(*model);
  ASSERT_TRUE(AddLoraAdapters(*model, Config(), 1).ok());
  PerturbAdapters(*model);
  const at::Tensor adapted = Logits(*model);
  MergeLora(*model);
  EXPECT_TRUE(at::allclose(Logits(*model), adapted, 1e-4, 1e-5));
  {
    ScopedAdaptersDisabled disabled(*model);
    EXPECT_TRUE(at::equal(Logits(*model), base));
  }
  UnmergeLora(*model);
  size_t i = 0;
  for (auto& [name, param] : model->NamedParameters()) {
    EXPECT_TRUE(at::equal(*param, base_weights[i++])) << name;
  }
}

TEST(Lora, PeftFilesRoundTrip) {
  std::unique_ptr<CausalLM> model = Fixture();
  ASSERT_TRUE(AddLoraAdapters(*model, Config({"q_proj", "down_proj"}), 1).ok());
  PerturbAdapters(*model);
  TempDir dir("lora");
  ASSERT_TRUE(SaveLoraAdapter(*model, Config({"q_proj", "down_proj"}), dir.path(), kFixture).ok());
  std::unique_ptr<CausalLM> other = Fixture();
  absl::StatusOr<LoraConfig> loaded = LoadLoraAdapter(*other, dir.path());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->options.rank, 4);
  EXPECT_EQ(loaded->target_modules, std::vector<std::string>({"q_proj", "down_proj"}));
  EXPECT_TRUE(at::equal(Logits(*other), Logits(*model)));
}

// PEFT options beyond plain LoRA change what an adapter computes: each is refused by
// name rather than loaded as plain LoRA.
TEST(Lora, PeftOptionsBeyondPlainLoraAreRefused) {
  std::unique_ptr<CausalLM> model = Fixture();
  ASSERT_TRUE(AddLoraAdapters(*model, Config({"q_proj"}), 1).ok());
  TempDir dir("lora_peft_options");
  ASSERT_TRUE(SaveLoraAdapter(*model, Config({"q_proj"}), dir.path(), kFixture).ok());
  const std::string saved = ReadFile(dir.Path("adapter_config.json")).value();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"("use_rslora": false)", R"("use_rslora": true)"},
      {R"("use_dora": false)", R"("use_dora": true)"},
      {R"("bias": "none")", R"("bias": "lora_only")"},
      {R"("modules_to_save": null)", R"("modules_to_save": ["lm_head"])"},
  };
  for (const auto& [plain, option] : cases) {
    std::string json = saved;
    ASSERT_NE(json.find(plain), std::string::npos) << plain;
    json.replace(json.find(plain), plain.size(), option);
    ASSERT_TRUE(WriteFileAtomically(dir.Path("adapter_config.json"), json).ok());
    const absl::Status status = LoadLoraAdapter(*Fixture(), dir.path()).status();
    EXPECT_THAT(status.message(), HasSubstr("adapter_config.json: ")) << option;
    EXPECT_THAT(status.message(), HasSubstr(" is not implemented here")) << option;
    EXPECT_THAT(status.message(), HasSubstr(option.substr(1, option.find('"', 1) - 1))) << status;
  }
}

TEST(Lora, OnlyAdaptersReceiveGradients) {
  std::unique_ptr<CausalLM> model = Fixture();
  ASSERT_TRUE(AddLoraAdapters(*model, Config(), 1).ok());
  PerturbAdapters(*model);
  const at::Tensor ids = at::tensor({3, 17, 250, 9}, at::kLong).view({1, 4});
  model->Logits(model->Forward(ids, at::arange(4, at::kLong).view({1, 4}), at::Tensor()))
      .sum()
      .backward();
  for (auto& [name, tensor] : NamedLoraParameters(*model)) {
    EXPECT_TRUE(tensor->grad().defined()) << name;
  }
  for (auto& [name, param] : model->NamedParameters()) {
    EXPECT_FALSE(param->grad().defined()) << name;
  }
}

}  // namespace
}  // namespace rollout::models
