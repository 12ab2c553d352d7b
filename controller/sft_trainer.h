// The supervised fine-tuning loop (trainer.mode: sft; verl's SFT trainer): each step
// takes data.train_batch_size prompt/response pairs from data.train_files, splits them
// over the actor workers (actor.sft_update: one optimizer step on the response tokens'
// NLL), and logs train/loss, train/grad_norm and train/lr; validation (val/loss over
// data.val_files, weighted by tokens) runs before training, every trainer.test_freq
// steps and after the last. Not thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "controller/dataloader.h"
#include "controller/dataset.h"
#include "controller/metrics_logger.h"
#include "controller/worker_group.h"
#include "proto/recipe.pb.h"

namespace rollout::controller {

class SftTrainer {
 public:
  // Loads the SFT datasets, checks the batch split and initialises the workers' roles.
  static absl::StatusOr<std::unique_ptr<SftTrainer>> Create(const config::Recipe& recipe,
                                                            WorkerGroup* policy);

  absl::Status Fit(MetricsLogger& logger);
  // val/loss over the validation pairs (token-weighted mean NLL).
  absl::StatusOr<std::map<std::string, double>> Validate();

  int64_t total_steps() const { return total_steps_; }

 private:
  SftTrainer(const config::Recipe& recipe, WorkerGroup* policy) : recipe_(recipe), policy_(policy) {}
  absl::StatusOr<Batch> Rows(const Dataset<SftExample>& data, const std::vector<int64_t>& indices) const;

  const config::Recipe recipe_;
  WorkerGroup* const policy_;
  Dataset<SftExample> train_;
  Dataset<SftExample> val_;
  std::unique_ptr<DataLoader> loader_;
  int64_t total_steps_ = 0;
};

}  // namespace rollout::controller
