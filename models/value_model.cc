#include "models/value_model.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <map>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "models/safetensors.h"

namespace rollout::models {
namespace {

constexpr double kInitStd = 0.02;

// score.weight / score.bias from a saved value model or reward model, or HF's
// initialisation.
absl::StatusOr<std::pair<at::Tensor, at::Tensor>> ScoreHead(const std::string& dir,
                                                            const TransformerConfig& config,
                                                            uint64_t seed) {
  ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsReader> reader, SafetensorsReader::OpenDirectory(dir));
  if (config.head != "value") {
    at::Generator generator = at::detail::createCPUGenerator(seed);
    return std::make_pair(
        at::empty({1, config.hidden_size}, at::kFloat).normal_(0.0, kInitStd, generator),
        at::zeros({1}, at::kFloat));
  }
  ASSIGN_OR_RETURN(at::Tensor weight, reader->Load("score.weight"));
  // A reward model's head (XForSequenceClassification) has no bias: zero, as HF
  // initialises the bias AutoModelForTokenClassification adds when it loads one.
  at::Tensor bias = at::zeros({1}, weight.options());
  if (reader->Has("score.bias")) {
    ASSIGN_OR_RETURN(bias, reader->Load("score.bias"));
  }
  if (weight.sizes() != at::IntArrayRef({1, config.hidden_size}) || bias.numel() != 1) {
    return absl::DataLossError(absl::StrCat("value model ", dir,
                                            ": score.weight must be [1, hidden_size] and "
                                            "score.bias [1]"));
  }
  return std::make_pair(weight, bias.reshape({1}));
}

}  // namespace

ValueModel::ValueModel(std::unique_ptr<CausalLM> backbone, at::Tensor score_weight,
                       at::Tensor score_bias)
    : backbone_(std::move(backbone)),
      score_weight_(std::move(score_weight)),
      score_bias_(std::move(score_bias)) {}

absl::StatusOr<std::unique_ptr<ValueModel>> ValueModel::Load(const std::string& dir,
                                                             const LoadOptions& options,
                                                             uint64_t seed) {
  LoadOptions backbone_options = options;
  backbone_options.with_lm_head = false;
  ASSIGN_OR_RETURN(std::unique_ptr<CausalLM> backbone, CausalLM::Load(dir, backbone_options));
  ASSIGN_OR_RETURN(auto head, ScoreHead(dir, backbone->config(), seed));
  const at::TensorOptions t = at::TensorOptions().dtype(options.dtype).device(options.device);
  return std::unique_ptr<ValueModel>(
      new ValueModel(std::move(backbone), head.first.to(t), head.second.to(t)));
}

at::Tensor ValueModel::Values(const at::Tensor& input_ids, const at::Tensor& position_ids,
                              const at::Tensor& attention_mask) const {
  const at::Tensor hidden = backbone_->Forward(input_ids, position_ids, attention_mask);
  return at::linear(hidden, score_weight_, score_bias_).squeeze(-1).to(at::kFloat);
}

std::vector<std::pair<std::string, at::Tensor*>> ValueModel::NamedParameters() {
  std::vector<std::pair<std::string, at::Tensor*>> params = backbone_->NamedParameters();
  params.emplace_back("score.weight", &score_weight_);
  params.emplace_back("score.bias", &score_bias_);
  return params;
}

absl::Status ValueModel::Save(const std::string& dir) const {
  RETURN_IF_ERROR(MakeDirectories(dir));
  std::map<std::string, at::Tensor> tensors = backbone_->BaseTensors();
  tensors["score.weight"] = score_weight_;
  tensors["score.bias"] = score_bias_;
  RETURN_IF_ERROR(WriteSafetensors(JoinPath(dir, "model.safetensors"),
                                   {tensors.begin(), tensors.end()}, {{"format", "pt"}}));
  TransformerConfig config = backbone_->config();
  config.head = "value";
  RETURN_IF_ERROR(WriteFileAtomically(JoinPath(dir, "config.json"), HfConfigJson(config)));
  return WriteFileAtomically(JoinPath(dir, "generation_config.json"),
                             HfGenerationConfigJson(config));
}

}  // namespace rollout::models
