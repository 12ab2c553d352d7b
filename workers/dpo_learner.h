// Direct preference optimisation on one device (TRL's DPOTrainer numerics, without the
// data parallelism): pairs of chosen and rejected responses to the same prompts, the
// policy's summed response log-probs against the reference's, algorithms/dpo_loss.h's
// loss, over the shared mini-batch loop (rows are pairs), with the LR schedule stepped
// once per update. The reference log-probs come from SequenceLogProbs under the
// reference policy — with LoRA, this model with its adapters disabled.
// With rpo_alpha > 0 (TRL's RPO) the loss adds rpo_alpha x the chosen responses'
// token-mean NLL of each micro-batch.
// Metrics: train/loss, train/rewards/chosen, train/rewards/rejected,
// train/rewards/accuracies, train/rewards/margins, and with RPO train/nll_loss (means
// over micro-batches), train/grad_norm, train/lr.
//
// Thread-compatible; the model must outlive the learner and only the learner changes it.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "algorithms/dpo_loss.h"
#include "models/causal_lm.h"
#include "workers/adamw.h"
#include "workers/lr_schedule.h"
#include "workers/minibatch_loop.h"
#include "workers/policy_batch.h"

namespace rollout::workers {

// Row i of `chosen` and of `rejected` answer the same prompt.
struct PreferenceBatch {
  PolicyBatch chosen;
  PolicyBatch rejected;
  at::Tensor reference_chosen_logps;    // [B] float32, SequenceLogProbs under the reference
  at::Tensor reference_rejected_logps;  // [B]
};

struct DpoOptions {
  MiniBatchPlan plan;  // rows are pairs; fixed micro-batches (no token budget)
  algorithms::DpoLossOptions loss;
  double rpo_alpha = 0;  // >= 0
  AdamWOptions adamw;  // lr is the schedule's
  LrScheduleOptions lr_schedule;
};

// [B] float32: each row's summed response log-probs (response_mask applied) under
// `model` as it is now, `micro_batch_rows` rows at a time, without gradients.
absl::StatusOr<at::Tensor> SequenceLogProbs(const models::CausalLM& model, const PolicyBatch& batch,
                                            int64_t micro_batch_rows);

class DpoLearner {
 public:
  // `trainable`: all parameters, or the LoRA adapters; they get requires_grad.
  // InvalidArgument for a bad plan (one with a token budget included), loss options or LR
  // schedule.
  static absl::StatusOr<std::unique_ptr<DpoLearner>> Create(models::CausalLM* model,
                                                            std::vector<at::Tensor*> trainable,
                                                            const DpoOptions& options);

  // InvalidArgument when the halves do not fit (rows, shapes) or the reference log-probs
  // are not [B].
  absl::StatusOr<std::map<std::string, double>> Update(const PreferenceBatch& batch);

  // The same loss and reward metrics without training, named val/... (val/loss,
  // val/rewards/accuracies, ...), computed `micro_batch_rows` pairs at a time.
  absl::StatusOr<std::map<std::string, double>> Evaluate(const PreferenceBatch& batch,
                                                         int64_t micro_batch_rows) const;

  // For checkpoints (workers/checkpoint_io.h): the optimizer, and the number of updates
  // so far (the LR schedule's position).
  AdamW& optimizer() { return optimizer_; }
  int64_t updates() const { return updates_; }
  int64_t* mutable_updates() { return &updates_; }

 private:
  DpoLearner(models::CausalLM* model, std::vector<at::Tensor*> trainable, const DpoOptions& options,
             LrSchedule schedule);

  models::CausalLM* const model_;
  std::vector<at::Tensor*> trainable_;
  const DpoOptions options_;
  LrSchedule schedule_;
  AdamW optimizer_;
  int64_t updates_ = 0;
};

}  // namespace rollout::workers
