// Supervised fine-tuning on one device (verl's SFT trainer without the data
// parallelism): the mean negative log-likelihood of the response tokens (prompt and
// padding excluded), over the shared mini-batch loop, with the LR schedule stepped once
// per update. Metrics: train/loss (mean over micro-batches), train/grad_norm, train/lr.
//
// Thread-compatible; the model must outlive the learner and only the learner changes it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/causal_lm.h"
#include "workers/adamw.h"
#include "workers/lr_schedule.h"
#include "workers/minibatch_loop.h"
#include "workers/policy_batch.h"

namespace rollout::workers {

struct SftOptions {
  MiniBatchPlan plan;  // one mini-batch per update: mini_batch_rows = the batch's rows
  AdamWOptions adamw;  // lr is the schedule's
  LrScheduleOptions lr_schedule;
};

class SftLearner {
 public:
  // `trainable`: all parameters, or the LoRA adapters; they get requires_grad.
  static absl::StatusOr<std::unique_ptr<SftLearner>> Create(models::CausalLM* model,
                                                            std::vector<at::Tensor*> trainable,
                                                            const SftOptions& options);

  // One optimisation step per mini-batch of `batch` (responses and response_mask used;
  // the update-only tensors are not). InvalidArgument for a batch that does not fit.
  absl::StatusOr<std::map<std::string, double>> Update(const PolicyBatch& batch);

  // The same loss without training: train/loss's twin for validation (val/loss).
  absl::StatusOr<double> Loss(const PolicyBatch& batch, int64_t micro_batch_rows) const;

  // For checkpoints (workers/checkpoint_io.h): the optimizer, and the number of updates
  // so far (the LR schedule's position).
  AdamW& optimizer() { return optimizer_; }
  int64_t* mutable_updates() { return &updates_; }

 private:
  SftLearner(models::CausalLM* model, std::vector<at::Tensor*> trainable, const SftOptions& options,
             LrSchedule schedule);

  models::CausalLM* const model_;
  std::vector<at::Tensor*> trainable_;
  const SftOptions options_;
  LrSchedule schedule_;
  AdamW optimizer_;
  int64_t updates_ = 0;
};

}  // namespace rollout::workers
