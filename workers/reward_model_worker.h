// The reward_model role of one worker process (verl's RewardModelWorker): a frozen
// reward model, loaded from reward_model.model.path in reward_model.model.dtype — a
// sequence classifier with one label (XForSequenceClassification) or a saved value
// model (XForTokenClassification), both read as models/value_model.h reads them; a
// causal LM, whose head would be random, is refused. It scores whole responses for the
// controller, which trains on those scores in place of reward.* (verl's reward managers
// return the reward model's scores when there are any).
//
// Method, by the name the controller calls (Batch columns in verl's layout, see
// policy_batch.h):
//   reward_model.compute_rm_score  input_ids, attention_mask, position_ids, responses
//                          (+ the strings prompt, prompt_format unless
//                          reward_model.model.input_tokenizer is null:
//                          reward_model_inputs.h re-renders each row)
//                          -> rm_scores [N] float32, the model's output at each row's
//                          last token; micro-batches of reward_model.micro_batch_size_per_gpu
//                          rows, or forward_max_token_len_per_gpu tokens with
//                          use_dynamic_bsz
//
// Thread-compatible (the MethodRegistry runs one method at a time).
#pragma once

#include <c10/core/Device.h>

#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "common/batch.h"
#include "models/tokenizer.h"
#include "models/value_model.h"
#include "proto/recipe.pb.h"
#include "workers/method_registry.h"
#include "workers/reward_model_inputs.h"

namespace rollout::workers {

struct RewardModelWorkerSetup {
  config::Recipe recipe;
  c10::Device device = c10::Device(c10::kCPU);
};

class RewardModelWorker {
 public:
  // Loads the reward model and, unless reward_model.model.input_tokenizer is null, the
  // tokenizer it names (unset: the actor's) and the reward model's own. InvalidArgument for no reward_model.model.path, a model
  // that is not a reward model, or (when re-rendering) a reward model whose chat
  // template cannot be rendered here; NotFound / DataLoss for model files.
  static absl::StatusOr<std::unique_ptr<RewardModelWorker>> Create(const RewardModelWorkerSetup& setup);

  // Registers reward_model.compute_rm_score; `this` must outlive the registry's use.
  absl::Status RegisterMethods(MethodRegistry* registry);

  // InvalidArgument for missing columns, a token id outside the reward model's
  // vocabulary (the actor's ids scored as they are need a shared tokenizer), or a row
  // over the token budget.
  absl::StatusOr<Batch> ComputeRmScore(const Batch& input) const;

 private:
  RewardModelWorker(const RewardModelWorkerSetup& setup, std::unique_ptr<models::ValueModel> model)
      : setup_(setup), model_(std::move(model)) {}
  // The sequences to score, on this worker's device.
  absl::StatusOr<RewardModelInputs> InputsFrom(const Batch& input) const;

  const RewardModelWorkerSetup setup_;
  std::unique_ptr<models::ValueModel> model_;
  // Set when re-rendering (reward_model.model.input_tokenizer is not null).
  std::unique_ptr<models::Tokenizer> input_tokenizer_;
  std::unique_ptr<models::Tokenizer> tokenizer_;
};

}  // namespace rollout::workers
