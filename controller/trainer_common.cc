#include "controller/trainer_common.h"

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace rollout::controller {

DatasetOptions DatasetOptionsFrom(const config::DataConfig& data) {
  DatasetOptions options;
  options.prompt_key = data.prompt_key();
  options.prompt_dict_keys.assign(data.prompt_dict_keys().begin(), data.prompt_dict_keys().end());
  options.response_key = data.response_key();
  options.response_dict_keys.assign(data.response_dict_keys().begin(),
                                    data.response_dict_keys().end());
  options.reward_fn_key = data.reward_fn_key();
  options.chosen_key = data.chosen_key();
  options.rejected_key = data.rejected_key();
  options.text_prompts_as_user_message = data.text_prompts() == "user_message";
  options.messages_key = data.multiturn().messages_key();
  options.tools_key = data.multiturn().tools_key();
  options.skip_bad_rows = data.skip_bad_rows();
  return options;
}

std::vector<std::string> Files(const google::protobuf::RepeatedPtrField<std::string>& files) {
  return std::vector<std::string>(files.begin(), files.end());
}

void LogSkippedRows(int64_t skipped_rows, const std::string& first_skipped, const std::string& which) {
  if (skipped_rows == 0) return;
  ROLLOUT_LOG(WARNING) << "skipped " << skipped_rows << " bad " << which
                       << " rows (data.skip_bad_rows); the first: " << first_skipped;
}

int64_t TotalTrainingSteps(const config::TrainerConfig& trainer, int64_t steps_per_epoch) {
  return trainer.total_training_steps() > 0 ? trainer.total_training_steps()
                                            : trainer.total_epochs() * steps_per_epoch;
}

bool ValidatesAfter(const config::TrainerConfig& trainer, int64_t step, int64_t total_steps) {
  return step == total_steps || (trainer.test_freq() > 0 && step % trainer.test_freq() == 0);
}

Batch InitRolesInput(int64_t total_training_steps) {
  Batch init;
  init.SetMeta("total_training_steps", absl::StrCat(total_training_steps));
  return init;
}

absl::Status InitRoles(WorkerGroup& group, int64_t total_training_steps) {
  return group.CallAll("worker.init_roles", InitRolesInput(total_training_steps)).status();
}

}  // namespace rollout::controller
