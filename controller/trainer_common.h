// What the training loops (ppo_trainer.h, sft_trainer.h) share: the recipe's dataset
// options and files, the number of steps, when to validate, and the workers' role
// initialisation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/batch.h"
#include "controller/dataset.h"
#include "controller/worker_group.h"
#include "proto/recipe.pb.h"

namespace rollout::controller {

DatasetOptions DatasetOptionsFrom(const config::DataConfig& data);
std::vector<std::string> Files(const google::protobuf::RepeatedPtrField<std::string>& files);

// A warning with the count and the first of the bad rows data.skip_bad_rows left out of
// the `which` ("training", "validation") set; nothing when none was.
void LogSkippedRows(int64_t skipped_rows, const std::string& first_skipped, const std::string& which);
template <typename Example>
void LogSkippedRows(const Dataset<Example>& dataset, const std::string& which) {
  LogSkippedRows(dataset.skipped_rows, dataset.first_skipped, which);
}

// verl's data.train_max_samples / val_max_samples (`max_samples`) over `rows` rows read:
// the indices of the rows kept, in file order. All of them when max_samples <= 0 or not
// below `rows`; else the first max_samples, or with data.shuffle a choice of that many
// without repeats, seeded by data.seed (each row ranked by a hash of the seed and its
// index), the same rows on every run.
std::vector<size_t> CappedRows(size_t rows, int64_t max_samples, const config::DataConfig& data);

// Keeps the examples CappedRows chooses, logging how many of how many the `which`
// ("training", "validation") set keeps when it drops any.
void LogCappedRows(size_t kept, size_t rows, const std::string& which);
template <typename Example>
void CapRows(int64_t max_samples, const config::DataConfig& data, const std::string& which,
             Dataset<Example>* dataset) {
  const std::vector<size_t> kept = CappedRows(dataset->examples.size(), max_samples, data);
  if (kept.size() == dataset->examples.size()) return;
  std::vector<Example> examples;
  examples.reserve(kept.size());
  for (const size_t row : kept) examples.push_back(std::move(dataset->examples[row]));
  LogCappedRows(kept.size(), dataset->examples.size(), which);
  dataset->examples = std::move(examples);
}

// trainer.total_training_steps when set, else total_epochs x steps_per_epoch (verl's rule).
int64_t TotalTrainingSteps(const config::TrainerConfig& trainer, int64_t steps_per_epoch);

// Validation runs after `step` when trainer.test_freq divides it or it is the last step.
bool ValidatesAfter(const config::TrainerConfig& trainer, int64_t step, int64_t total_steps);

// worker.init_roles' input: the LR schedules' horizon.
Batch InitRolesInput(int64_t total_training_steps);

// worker.init_roles on every worker of `group`, with the LR schedules' horizon.
absl::Status InitRoles(WorkerGroup& group, int64_t total_training_steps);

}  // namespace rollout::controller
