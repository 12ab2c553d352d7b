#include "controller/offline_trainer.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/batch_metrics.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "controller/dataset.h"
#include "controller/trainer_common.h"

namespace rollout::controller {
namespace {

const char* FormatName(const Prompt& prompt) {
  return prompt.format == Prompt::Format::kChat ? "chat" : "text";
}

const char* FormatName(const Response& response) {
  return response.format == Response::Format::kMessages ? "messages" : "text";
}

int64_t RowCount(const std::map<std::string, std::vector<std::string>>& columns) {
  return columns.empty() ? 0 : static_cast<int64_t>(columns.begin()->second.size());
}

}  // namespace

absl::StatusOr<OfflineTrainer::Columns> OfflineTrainer::Load(const std::vector<std::string>& files,
                                                             const std::string& which, int64_t max_samples) const {
  const DatasetOptions options = DatasetOptionsFrom(recipe_.data());
  Columns columns;
  if (recipe_.trainer().mode() == "sft") {
    ASSIGN_OR_RETURN(Dataset<SftExample> data, recipe_.data().multiturn().enable()
                                                   ? LoadConversationDataset(files, options)
                                                   : LoadSftDataset(files, options));
    LogSkippedRows(data, which);
    CapRows(max_samples, recipe_.data(), which, &data);
    for (const SftExample& example : data.examples) {
      columns["prompt"].push_back(example.prompt.content);
      columns["prompt_format"].push_back(FormatName(example.prompt));
      columns["response"].push_back(example.response.content);
      columns["response_format"].push_back(FormatName(example.response));
    }
  } else {
    ASSIGN_OR_RETURN(Dataset<PreferenceExample> data, LoadPreferenceDataset(files, options));
    LogSkippedRows(data, which);
    CapRows(max_samples, recipe_.data(), which, &data);
    for (const PreferenceExample& example : data.examples) {
      columns["prompt"].push_back(example.prompt.content);
      columns["prompt_format"].push_back(FormatName(example.prompt));
      columns["chosen"].push_back(example.chosen.content);
      columns["rejected"].push_back(example.rejected.content);
      columns["response_format"].push_back(FormatName(example.chosen));
    }
  }
  return columns;
}

absl::StatusOr<std::unique_ptr<OfflineTrainer>> OfflineTrainer::Create(const config::Recipe& recipe,
                                                                      WorkerGroup* policy) {
  const std::string& mode = recipe.trainer().mode();
  if (mode != "sft" && mode != "dpo") {
    return absl::InvalidArgumentError(absl::StrCat("trainer.mode ", mode, " is not an offline loop"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<OfflineTrainer> trainer, Prepare(recipe, policy));
  RETURN_IF_ERROR(InitRoles(*policy, trainer->total_steps_));
  ASSIGN_OR_RETURN(trainer->checkpoints_, TrainerCheckpoints::Create(recipe, {{"actor", policy}}));
  ASSIGN_OR_RETURN(const std::optional<TrainerState> state, trainer->checkpoints_->Resume());
  if (state.has_value()) {
    RETURN_IF_ERROR(trainer->loader_->Restore(state->data_position));
    trainer->global_step_ = state->global_step;
  }
  return trainer;
}

config::Recipe SftWarmStartRecipe(const config::Recipe& recipe) {
  const config::SftWarmStartConfig& warm = recipe.sft_warm_start();
  config::Recipe sft = recipe;
  sft.mutable_trainer()->set_mode("sft");
  sft.mutable_trainer()->set_experiment_name(recipe.trainer().experiment_name() + "_sft_warm_start");
  sft.mutable_trainer()->set_total_training_steps(warm.total_training_steps());
  sft.mutable_trainer()->set_test_freq(warm.test_freq());
  *sft.mutable_data()->mutable_train_files() = warm.train_files();
  *sft.mutable_data()->mutable_val_files() = warm.val_files();
  // data.*_max_samples cap the PPO recipe's own files, not these.
  sft.mutable_data()->clear_train_max_samples();
  sft.mutable_data()->clear_val_max_samples();
  sft.mutable_data()->set_train_batch_size(warm.train_batch_size());
  *sft.mutable_actor()->mutable_optim() = warm.optim();
  return sft;
}

absl::StatusOr<std::unique_ptr<OfflineTrainer>> OfflineTrainer::CreateSftWarmStart(
    const config::Recipe& recipe, WorkerGroup* policy) {
  if (recipe.trainer().mode() != "ppo" || recipe.sft_warm_start().total_training_steps() <= 0) {
    return absl::InvalidArgumentError(
        "an SFT warm start needs trainer.mode ppo and sft_warm_start.total_training_steps > 0");
  }
  const config::SftWarmStartConfig& warm = recipe.sft_warm_start();
  if (warm.train_files_size() == 0) return absl::InvalidArgumentError("sft_warm_start.train_files is empty");
  if (warm.stop_val_loss() > 0 && (warm.val_files_size() == 0 || warm.test_freq() <= 0)) {
    return absl::InvalidArgumentError(
        "sft_warm_start.stop_val_loss needs validation: set sft_warm_start.val_files and sft_warm_start.test_freq > 0");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<OfflineTrainer> trainer, Prepare(SftWarmStartRecipe(recipe), policy));
  trainer->stop_val_loss_ = warm.stop_val_loss();
  return trainer;
}

absl::StatusOr<std::unique_ptr<OfflineTrainer>> OfflineTrainer::Prepare(const config::Recipe& recipe,
                                                                       WorkerGroup* policy) {
  const std::string& mode = recipe.trainer().mode();
  std::unique_ptr<OfflineTrainer> trainer(new OfflineTrainer(recipe, policy));
  trainer->update_method_ = mode == "sft" ? "actor.sft_update" : "actor.dpo_update";
  trainer->eval_method_ = mode == "sft" ? "actor.sft_loss" : "actor.dpo_eval";
  ASSIGN_OR_RETURN(trainer->train_,
                   trainer->Load(Files(recipe.data().train_files()), "training", recipe.data().train_max_samples()));
  if (recipe.data().val_files_size() > 0) {
    ASSIGN_OR_RETURN(trainer->val_,
                     trainer->Load(Files(recipe.data().val_files()), "validation", recipe.data().val_max_samples()));
  }
  DataLoaderOptions loader;
  loader.batch_size = recipe.data().train_batch_size();
  loader.shuffle = recipe.data().shuffle();
  loader.seed = recipe.data().seed();
  ASSIGN_OR_RETURN(DataLoader created, DataLoader::Create(RowCount(trainer->train_), loader));
  trainer->loader_ = std::make_unique<DataLoader>(std::move(created));
  trainer->total_steps_ = TotalTrainingSteps(recipe.trainer(), trainer->loader_->steps_per_epoch());
  return trainer;
}

absl::StatusOr<Batch> OfflineTrainer::Rows(const Columns& data, const std::vector<int64_t>& indices) const {
  Batch rows;
  for (const auto& [name, values] : data) {
    std::vector<std::string> selected;
    for (int64_t index : indices) selected.push_back(values[static_cast<size_t>(index)]);
    RETURN_IF_ERROR(rows.AddStrings(name, std::move(selected)));
  }
  return rows;
}

absl::StatusOr<std::map<std::string, double>> OfflineTrainer::Validate() {
  ASSIGN_OR_RETURN(const auto batches, ValidationBatches(RowCount(val_), recipe_.data().val_batch_size()));
  std::map<std::string, double> weighted;
  double total_weight = 0;
  for (const std::vector<int64_t>& indices : batches) {
    ASSIGN_OR_RETURN(const Batch rows, Rows(val_, indices));
    // Padding rows would count twice: a batch that does not split goes to rank 0 whole.
    std::vector<Batch> shards;
    if (rows.size() % policy_->world_size() == 0) {
      ASSIGN_OR_RETURN(shards, policy_->CallDpShards(eval_method_, rows));
    } else {
      ASSIGN_OR_RETURN(Batch whole, policy_->CallRankZero(eval_method_, rows));
      shards.push_back(std::move(whole));
    }
    for (const Batch& shard : shards) {
      ASSIGN_OR_RETURN(auto metrics, GetBatchMetrics(shard));
      const double weight = metrics["val/weight"];
      metrics.erase("val/weight");
      for (const auto& [name, value] : metrics) weighted[name] += value * weight;
      total_weight += weight;
    }
  }
  for (auto& [name, value] : weighted) value = total_weight > 0 ? value / total_weight : 0.0;
  return weighted;
}

absl::StatusOr<std::map<std::string, double>> OfflineTrainer::Step() {
  const auto start = std::chrono::steady_clock::now();
  const int64_t epoch = loader_->position().epoch;
  std::map<std::string, double> metrics;
  if (checkpoints_ != nullptr && checkpoints_->save_pending()) {
    // The update changes what an asynchronous save is writing.
    RETURN_IF_ERROR(checkpoints_->FinishSave());
    metrics["timing_s/save_checkpoint_wait"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  ASSIGN_OR_RETURN(const Batch rows, Rows(train_, loader_->Next()));
  ASSIGN_OR_RETURN(const std::vector<Batch> shards, policy_->CallDpShards(update_method_, rows));
  for (const Batch& shard : shards) {
    ASSIGN_OR_RETURN(const auto shard_metrics, GetBatchMetrics(shard));
    for (const auto& [name, value] : shard_metrics) metrics[name] += value / static_cast<double>(shards.size());
  }
  ++global_step_;
  metrics["timing_s/step"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  metrics["training/global_step"] = static_cast<double>(global_step_);
  metrics["training/epoch"] = static_cast<double>(epoch);
  if (checkpoints_ != nullptr && checkpoints_->SaveDue(global_step_, total_steps_)) {
    const auto save_start = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(
        checkpoints_->Save(TrainerStateOf(recipe_, global_step_, loader_->position(), std::nullopt)));
    metrics["timing_s/save_checkpoint"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - save_start).count();
  }
  if (RowCount(val_) > 0 && ValidatesAfter(recipe_.trainer(), global_step_, total_steps_)) {
    ASSIGN_OR_RETURN(const auto val_metrics, Validate());
    metrics.insert(val_metrics.begin(), val_metrics.end());
  }
  return metrics;
}

absl::Status OfflineTrainer::ValidateOnly(MetricsLogger& logger) {
  if (RowCount(val_) == 0) {
    return absl::InvalidArgumentError("trainer.val_only needs validation rows: data.val_files has none");
  }
  ASSIGN_OR_RETURN(const auto metrics, Validate());
  return logger.Log(global_step_, metrics);
}

absl::Status OfflineTrainer::Fit(MetricsLogger& logger) {
  if (global_step_ >= total_steps_) {
    ROLLOUT_LOG(INFO) << "nothing left to train: resumed at step " << global_step_ << " of " << total_steps_;
    return absl::OkStatus();
  }
  if (recipe_.trainer().val_before_train() && RowCount(val_) > 0) {
    ASSIGN_OR_RETURN(const auto metrics, Validate());
    RETURN_IF_ERROR(logger.Log(global_step_, metrics));  // 0, or the resumed checkpoint's step
  }
  while (global_step_ < total_steps_) {
    const int64_t step = global_step_ + 1;
    absl::StatusOr<std::map<std::string, double>> metrics = Step();
    if (!metrics.ok()) {
      return absl::Status(metrics.status().code(),
                          absl::StrCat("step ", step, ": ", metrics.status().message()));
    }
    RETURN_IF_ERROR(logger.Log(step, *metrics));
    const auto val_loss = metrics->find("val/loss");
    if (stop_val_loss_ > 0 && val_loss != metrics->end() && val_loss->second <= stop_val_loss_) {
      ROLLOUT_LOG(INFO) << "val/loss " << val_loss->second << " <= stop_val_loss " << stop_val_loss_ << " at step "
                        << step << " of " << total_steps_ << ": the warm start ends here";
      break;
    }
  }
  return checkpoints_ != nullptr ? checkpoints_->FinishSave() : absl::OkStatus();
}

}  // namespace rollout::controller
