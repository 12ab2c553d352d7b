// A tiny reward model for tests, written as transformers writes a one-label
// Qwen2ForSequenceClassification: the tiny Qwen2 fixture's backbone and tokenizer with
// a random `score` head (no bias), the head drawn from a seed.
#pragma once

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "models/safetensors.h"
#include "models/tokenizer_files.h"
#include "models/value_model.h"

namespace rollout::testing {

// Writes the reward model to `dir` (created when missing) from the HF causal LM at
// `base` (tests/data/tiny-qwen2), float32.
inline absl::Status WriteTinyRewardModel(const std::string& base, const std::string& dir, uint64_t seed) {
  ASSIGN_OR_RETURN(std::unique_ptr<models::ValueModel> model, models::ValueModel::Load(base, models::LoadOptions(), seed));
  RETURN_IF_ERROR(model->Save(dir));
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  {
    ASSIGN_OR_RETURN(std::unique_ptr<models::SafetensorsReader> reader,
                     models::SafetensorsReader::OpenDirectory(dir));
    for (const std::string& name : reader->NamesInFileOrder()) {
      if (name == "score.bias") continue;  // a sequence classifier's head has none
      ASSIGN_OR_RETURN(at::Tensor tensor, reader->Load(name));
      tensors.emplace_back(name, tensor);
    }
  }
  RETURN_IF_ERROR(models::WriteSafetensors(JoinPath(dir, "model.safetensors"), tensors, {{"format", "pt"}}));
  ASSIGN_OR_RETURN(std::string config, ReadFile(JoinPath(dir, "config.json")));
  const std::string token = "ForTokenClassification";
  const size_t at = config.find(token);
  if (at == std::string::npos) return absl::InternalError(absl::StrCat(dir, "/config.json names no ", token));
  config.replace(at, token.size(), "ForSequenceClassification");
  RETURN_IF_ERROR(WriteFileAtomically(JoinPath(dir, "config.json"), config));
  return models::CopyTokenizerFiles(base, dir);
}

// `model`'s output at the last of `ids`, the sequence scored alone (no padding).
inline double ScoreAlone(const models::ValueModel& model, const std::vector<int32_t>& ids) {
  c10::NoGradGuard no_grad;
  const int64_t length = static_cast<int64_t>(ids.size());
  const at::Tensor values =
      model.Values(at::tensor(std::vector<int64_t>(ids.begin(), ids.end()), at::kLong).view({1, length}),
                   at::arange(length, at::kLong).view({1, length}), at::Tensor());
  return values[0][length - 1].item<double>();
}

}  // namespace rollout::testing
