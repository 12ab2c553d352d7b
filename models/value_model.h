// The critic's value model, as verl builds it with AutoModelForTokenClassification
// (num_labels = 1): the decoder backbone of models/causal_lm.h and a linear `score`
// head [1, H] (+ bias [1]) giving one value per position.
//
// Loads either a saved value model (config architectures XForTokenClassification,
// tensors score.weight / score.bias), a reward model (XForSequenceClassification with
// one label: score.weight, no bias, so a zero one — verl's critic started from a reward
// model, as AutoModelForTokenClassification loads it), or a causal LM (the usual start:
// the critic from the actor's weights), whose LM head is ignored and whose score head is
// initialised as HF does (normal(0, 0.02), zero bias; deterministic for a seed).
// Saves in HF's XForTokenClassification format, which transformers loads.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "models/causal_lm.h"

namespace rollout::models {

class ValueModel {
 public:
  static absl::StatusOr<std::unique_ptr<ValueModel>> Load(const std::string& dir,
                                                          const LoadOptions& options,
                                                          uint64_t seed);

  // Same inputs as CausalLM::Forward; returns [B, T] float32 values.
  at::Tensor Values(const at::Tensor& input_ids, const at::Tensor& position_ids,
                    const at::Tensor& attention_mask) const;

  absl::Status Save(const std::string& dir) const;

  // Backbone parameters (HF names, no LM head) and score.weight / score.bias.
  std::vector<std::pair<std::string, at::Tensor*>> NamedParameters();
  const CausalLM& backbone() const { return *backbone_; }
  // CausalLM::set_activation_checkpointing of the backbone.
  void set_activation_checkpointing(bool enabled) { backbone_->set_activation_checkpointing(enabled); }

 private:
  ValueModel(std::unique_ptr<CausalLM> backbone, at::Tensor score_weight, at::Tensor score_bias);

  std::unique_ptr<CausalLM> backbone_;
  at::Tensor score_weight_;  // [1, H]
  at::Tensor score_bias_;    // [1]
};

}  // namespace rollout::models
