#include "controller/trainer_common.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/mix_bits.h"

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

std::vector<size_t> CappedRows(size_t rows, int64_t max_samples, const config::DataConfig& data) {
  const size_t keep = max_samples <= 0 ? rows : std::min(rows, static_cast<size_t>(max_samples));
  std::vector<size_t> kept(rows);
  std::iota(kept.begin(), kept.end(), size_t{0});
  if (keep == rows || !data.shuffle()) {
    kept.resize(keep);
    return kept;
  }
  const uint64_t seed = MixBits(static_cast<uint64_t>(data.seed()));
  const auto rank = [seed](size_t row) { return MixBits(seed + kGoldenGamma * (static_cast<uint64_t>(row) + 1)); };
  std::nth_element(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(keep), kept.end(),
                   [&rank](size_t a, size_t b) { return rank(a) < rank(b); });
  kept.resize(keep);
  std::sort(kept.begin(), kept.end());
  return kept;
}

void LogCappedRows(size_t kept, size_t rows, const std::string& which) {
  ROLLOUT_LOG(INFO) << "kept " << kept << " of the " << rows << " " << which
                    << " rows (data.train_max_samples / val_max_samples)";
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
