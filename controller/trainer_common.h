// What the training loops (ppo_trainer.h, sft_trainer.h) share: the recipe's dataset
// options and files, the number of steps, when to validate, and the workers' role
// initialisation.
#pragma once

#include <cstdint>
#include <string>
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

// trainer.total_training_steps when set, else total_epochs x steps_per_epoch (verl's rule).
int64_t TotalTrainingSteps(const config::TrainerConfig& trainer, int64_t steps_per_epoch);

// Validation runs after `step` when trainer.test_freq divides it or it is the last step.
bool ValidatesAfter(const config::TrainerConfig& trainer, int64_t step, int64_t total_steps);

// worker.init_roles' input: the LR schedules' horizon.
Batch InitRolesInput(int64_t total_training_steps);

// worker.init_roles on every worker of `group`, with the LR schedules' horizon.
absl::Status InitRoles(WorkerGroup& group, int64_t total_training_steps);

}  // namespace rollout::controller
