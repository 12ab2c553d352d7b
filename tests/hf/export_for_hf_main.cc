// Writes what tests/hf/check_hf_parity.py loads with HF transformers and peft:
//   OUT/model     the tiny Qwen2 fixture, saved by CausalLM::Save
//   OUT/adapter   a LoRA adapter (PEFT format) with non-zero weights
//   OUT/value     a value model (XForTokenClassification) started from the fixture
//   OUT/llama     a random Llama model with Llama 3 RoPE scaling and an untied LM head
//   OUT/qwen3     a random Qwen3 model (per-head q/k norms with random weights, heads of
//                 32 against a hidden size of 64, no biases)
//   OUT/qwen3_value  a value model on OUT/qwen3's backbone
//   OUT/expect.json  {"ids", "base_logits", "lora_logits", "values", "llama_logits",
//                    "qwen3_logits", "qwen3_values"}: our float32 outputs for every
//                    position
// usage: export_for_hf OUT
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <iostream>

#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "models/causal_lm.h"
#include "models/lora.h"
#include "models/safetensors.h"
#include "models/value_model.h"
#include "tests/support/tiny_qwen3.h"

namespace rollout::models {
namespace {

std::vector<std::vector<float>> LogitsOf(const CausalLM& model, const std::vector<int64_t>& ids) {
  c10::NoGradGuard no_grad;
  const int64_t t = ids.size();
  const at::Tensor logits =
      model.Logits(model.Forward(at::tensor(ids, at::kLong).view({1, t}),
                                 at::arange(t, at::kLong).view({1, t}), at::Tensor()))[0]
          .contiguous();
  std::vector<std::vector<float>> rows;
  for (int64_t i = 0; i < t; ++i) {
    const float* row = logits[i].data_ptr<float>();
    rows.emplace_back(row, row + logits.size(1));
  }
  return rows;
}

// The fixture's shape as a Llama with Llama 3 frequency scaling (a short original
// context, so the scaling changes the low frequencies even at small positions).
TransformerConfig LlamaConfig(TransformerConfig c) {
  c.model_type = "llama";
  c.attention_bias = false;
  c.tie_word_embeddings = false;
  c.rope_theta = 500000.0;
  c.rope_scaling.type = "llama3";
  c.rope_scaling.factor = 8.0;
  c.rope_scaling.low_freq_factor = 1.0;
  c.rope_scaling.high_freq_factor = 4.0;
  c.rope_scaling.original_max_position_embeddings = 64;
  return c;
}

std::vector<float> ValuesOf(const ValueModel& model, const std::vector<int64_t>& ids) {
  c10::NoGradGuard no_grad;
  const int64_t t = ids.size();
  const at::Tensor values = model.Values(at::tensor(ids, at::kLong).view({1, t}),
                                         at::arange(t, at::kLong).view({1, t}), at::Tensor())[0];
  return std::vector<float>(values.data_ptr<float>(), values.data_ptr<float>() + t);
}

absl::Status ExportQwen3(const std::string& out, int64_t vocab_size,
                         const std::vector<int64_t>& ids, nlohmann::json* expect) {
  std::unique_ptr<CausalLM> qwen3 = testing::RandomQwen3(
      testing::TinyQwen3Config(vocab_size, /*head_dim=*/32), /*seed=*/9, LoadOptions());
  (*expect)["qwen3_logits"] = LogitsOf(*qwen3, ids);
  const std::string dir = JoinPath(out, "qwen3");
  if (absl::Status s = qwen3->Save(dir); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<ValueModel>> value = ValueModel::Load(dir, LoadOptions(), /*seed=*/3);
  if (!value.ok()) return value.status();
  (*expect)["qwen3_values"] = ValuesOf(**value, ids);
  return (*value)->Save(JoinPath(out, "qwen3_value"));
}

// The value model in <out>/value rewritten as HF writes a reward model
// (Qwen2ForSequenceClassification: score.weight without a bias) in <out>/reward, and
// what ValueModel::Load makes of it at the last token ("reward_score").
absl::Status ExportRewardModel(const std::string& out, const std::vector<int64_t>& ids, nlohmann::json* expect) {
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  {
    absl::StatusOr<std::unique_ptr<SafetensorsReader>> reader = SafetensorsReader::OpenDirectory(JoinPath(out, "value"));
    if (!reader.ok()) return reader.status();
    for (const std::string& name : (*reader)->NamesInFileOrder()) {
      if (name == "score.bias") continue;
      absl::StatusOr<at::Tensor> tensor = (*reader)->Load(name);
      if (!tensor.ok()) return tensor.status();
      tensors.emplace_back(name, *tensor);
    }
  }
  const std::string dir = JoinPath(out, "reward");
  if (absl::Status s = MakeDirectories(dir); !s.ok()) return s;
  if (absl::Status s = WriteSafetensors(JoinPath(dir, "model.safetensors"), tensors, {{"format", "pt"}}); !s.ok()) {
    return s;
  }
  absl::StatusOr<std::string> config = ReadFile(JoinPath(out, "value/config.json"));
  if (!config.ok()) return config.status();
  nlohmann::json json = nlohmann::json::parse(*config);
  json["architectures"] = {"Qwen2ForSequenceClassification"};
  if (absl::Status s = WriteFileAtomically(JoinPath(dir, "config.json"), json.dump(2)); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<ValueModel>> reward = ValueModel::Load(dir, LoadOptions(), /*seed=*/0);
  if (!reward.ok()) return reward.status();
  (*expect)["reward_score"] = ValuesOf(**reward, ids).back();
  return absl::OkStatus();
}

absl::Status ExportValueAndLlama(const std::string& out, const std::vector<int64_t>& ids,
                                 nlohmann::json* expect) {
  absl::StatusOr<std::unique_ptr<ValueModel>> value =
      ValueModel::Load("tests/data/tiny-qwen2", LoadOptions(), /*seed=*/3);
  if (!value.ok()) return value.status();
  for (auto& [name, param] : (*value)->NamedParameters()) {
    c10::NoGradGuard no_grad;
    if (name == "score.bias") param->fill_(0.25);  // a bias the reward model's export drops
  }
  (*expect)["values"] = ValuesOf(**value, ids);
  if (absl::Status s = (*value)->Save(JoinPath(out, "value")); !s.ok()) return s;
  if (absl::Status s = ExportRewardModel(out, ids, expect); !s.ok()) return s;
  std::unique_ptr<CausalLM> llama =
      CausalLM::RandomInit(LlamaConfig((*value)->backbone().config()), /*seed=*/7, LoadOptions());
  (*expect)["llama_logits"] = LogitsOf(*llama, ids);
  return llama->Save(JoinPath(out, "llama"));
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: export_for_hf OUT\n";
    return 2;
  }
  const std::string out = argv[1];
  absl::StatusOr<std::unique_ptr<CausalLM>> model =
      CausalLM::Load("tests/data/tiny-qwen2", LoadOptions());
  if (!model.ok()) {
    std::cerr << model.status() << "\n";
    return 1;
  }
  const std::vector<int64_t> ids = {279, 28, 290, 287, 223, 19, 26, 23, 346, 223, 19, 20};
  nlohmann::json expect = {{"ids", ids}, {"base_logits", LogitsOf(**model, ids)}};
  LoraConfig lora;
  lora.options.rank = 4;
  lora.options.alpha = 8;
  lora.target_modules = {"q_proj", "v_proj", "down_proj"};
  lora.exclude_modules = R"(.*\.layers\.1\.self_attn\..*)";  // layer 1's q_proj and v_proj
  absl::Status status = (*model)->Save(JoinPath(out, "model"));
  if (status.ok()) status = AddLoraAdapters(**model, lora, /*seed=*/5);
  if (status.ok()) {
    c10::NoGradGuard no_grad;
    at::manual_seed(5);
    for (auto& [name, tensor] : NamedLoraParameters(**model)) tensor->normal_(0, 0.1);
    expect["lora_logits"] = LogitsOf(**model, ids);
    status = SaveLoraAdapter(**model, lora, JoinPath(out, "adapter"), JoinPath(out, "model"));
  }
  if (status.ok()) status = ExportValueAndLlama(out, ids, &expect);
  if (status.ok()) status = ExportQwen3(out, (*model)->config().vocab_size, ids, &expect);
  if (status.ok()) status = WriteFileAtomically(JoinPath(out, "expect.json"), expect.dump());
  if (!status.ok()) {
    std::cerr << status << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace rollout::models

int main(int argc, char** argv) { return rollout::models::Main(argc, argv); }
