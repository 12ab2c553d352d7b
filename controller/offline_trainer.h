// The loops that learn from a fixed dataset rather than from rollouts:
//   trainer.mode sft  prompt/response pairs (verl's SFT trainer), or conversations with
//                     data.multiturn.enable: actor.sft_update, one optimizer step per
//                     batch on the response (assistant) tokens' NLL;
//   trainer.mode dpo  preference pairs (TRL's DPOTrainer): actor.dpo_update.
// Each step takes data.train_batch_size rows of data.train_files, splits them over the
// actor workers and logs what they report (train/loss, train/grad_norm, train/lr, and
// DPO's train/rewards/*). Validation over data.val_files (the workers' val/* metrics,
// averaged by the weight each reports: tokens for SFT, pairs for DPO) runs before
// training, every trainer.test_freq steps and after the last. A run made by Create()
// checkpoints the actor every trainer.save_freq steps and after the last
// (trainer_checkpoints.h, timing_s/save_checkpoint) and resumes from one as
// trainer.resume_mode says; an SFT warm start does neither. Not thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/dataloader.h"
#include "controller/metrics_logger.h"
#include "controller/trainer_checkpoints.h"
#include "controller/worker_group.h"
#include "proto/recipe.pb.h"

namespace rollout::controller {

// The SFT recipe a PPO recipe's sft_warm_start describes: trainer.mode sft, its files
// (every row: data.*_max_samples unset), batch size, steps, test_freq and optimizer;
// experiment `<experiment_name>_sft_warm_start`.
config::Recipe SftWarmStartRecipe(const config::Recipe& recipe);

class OfflineTrainer {
 public:
  // Loads the datasets of trainer.mode (sft or dpo), checks the batch split,
  // initialises the workers' roles and resumes (TrainerCheckpoints::Resume's errors).
  static absl::StatusOr<std::unique_ptr<OfflineTrainer>> Create(const config::Recipe& recipe,
                                                                WorkerGroup* policy);
  // The SFT phase of a PPO recipe with sft_warm_start (SftWarmStartRecipe above) on
  // workers the PPO trainer already initialised: they host actor.sft_update next to the
  // actor. With sft_warm_start.stop_val_loss, Fit ends at the first validation at or
  // below it. InvalidArgument when the recipe has no warm start, or a stop_val_loss
  // without validation files or test_freq.
  static absl::StatusOr<std::unique_ptr<OfflineTrainer>> CreateSftWarmStart(const config::Recipe& recipe,
                                                                            WorkerGroup* policy);

  absl::Status Fit(MetricsLogger& logger);
  absl::StatusOr<std::map<std::string, double>> Validate();
  // trainer.val_only: one validation of the weights as loaded (the resumed
  // checkpoint's, else the initial ones), logged at the current step. InvalidArgument
  // without validation rows.
  absl::Status ValidateOnly(MetricsLogger& logger);

  int64_t total_steps() const { return total_steps_; }
  int64_t global_step() const { return global_step_; }

 private:
  // A dataset as string columns: prompt, prompt_format (text | chat), response or
  // chosen and rejected, response_format (text | messages).
  using Columns = std::map<std::string, std::vector<std::string>>;

  OfflineTrainer(const config::Recipe& recipe, WorkerGroup* policy) : recipe_(recipe), policy_(policy) {}
  // Loads the data and plans the steps; initialises no worker.
  static absl::StatusOr<std::unique_ptr<OfflineTrainer>> Prepare(const config::Recipe& recipe,
                                                                 WorkerGroup* policy);
  // `which` ("training", "validation") names the set when bad rows were skipped or
  // rows were capped; `max_samples` is the set's data.*_max_samples.
  absl::StatusOr<Columns> Load(const std::vector<std::string>& files, const std::string& which,
                               int64_t max_samples) const;
  absl::StatusOr<Batch> Rows(const Columns& data, const std::vector<int64_t>& indices) const;

  // One training step (global_step_ + 1): its metrics.
  absl::StatusOr<std::map<std::string, double>> Step();

  const config::Recipe recipe_;
  WorkerGroup* const policy_;
  std::string update_method_;  // actor.sft_update | actor.dpo_update
  std::string eval_method_;    // actor.sft_loss | actor.dpo_eval
  Columns train_;
  Columns val_;
  std::unique_ptr<DataLoader> loader_;
  std::unique_ptr<TrainerCheckpoints> checkpoints_;  // null for an SFT warm start
  int64_t total_steps_ = 0;
  int64_t global_step_ = 0;
  double stop_val_loss_ = 0;  // > 0: Fit ends at the first val/loss at or below it
};

}  // namespace rollout::controller
