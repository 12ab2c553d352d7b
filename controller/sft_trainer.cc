#include "controller/sft_trainer.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/batch_metrics.h"
#include "common/status_macros.h"
#include "controller/trainer_common.h"

namespace rollout::controller {

absl::StatusOr<std::unique_ptr<SftTrainer>> SftTrainer::Create(const config::Recipe& recipe,
                                                              WorkerGroup* policy) {
  RETURN_IF_ERROR(CheckSingleTrainingRank(*policy));
  std::unique_ptr<SftTrainer> trainer(new SftTrainer(recipe, policy));
  const DatasetOptions options = DatasetOptionsFrom(recipe.data());
  ASSIGN_OR_RETURN(trainer->train_, LoadSftDataset(Files(recipe.data().train_files()), options));
  if (recipe.data().val_files_size() > 0) {
    ASSIGN_OR_RETURN(trainer->val_, LoadSftDataset(Files(recipe.data().val_files()), options));
  }
  const int64_t batch_size = recipe.data().train_batch_size();
  if (batch_size % policy->world_size() != 0) {
    return absl::InvalidArgumentError(absl::StrCat("data.train_batch_size (", batch_size,
                                                   ") must split evenly over the ",
                                                   policy->world_size(), " actor workers"));
  }
  DataLoaderOptions loader;
  loader.batch_size = batch_size;
  loader.shuffle = recipe.data().shuffle();
  loader.seed = recipe.data().seed();
  ASSIGN_OR_RETURN(DataLoader created,
                   DataLoader::Create(static_cast<int64_t>(trainer->train_.examples.size()), loader));
  trainer->loader_ = std::make_unique<DataLoader>(std::move(created));
  trainer->total_steps_ = TotalTrainingSteps(recipe.trainer(), trainer->loader_->steps_per_epoch());
  RETURN_IF_ERROR(InitRoles(*policy, trainer->total_steps_));
  return trainer;
}

absl::StatusOr<Batch> SftTrainer::Rows(const Dataset<SftExample>& data,
                                       const std::vector<int64_t>& indices) const {
  std::vector<std::string> prompts, formats, responses;
  for (int64_t index : indices) {
    const SftExample& example = data.examples[static_cast<size_t>(index)];
    prompts.push_back(example.prompt.content);
    formats.push_back(example.prompt.format == Prompt::Format::kChat ? "chat" : "text");
    responses.push_back(example.response);
  }
  Batch rows;
  RETURN_IF_ERROR(rows.AddStrings("prompt", std::move(prompts)));
  RETURN_IF_ERROR(rows.AddStrings("prompt_format", std::move(formats)));
  RETURN_IF_ERROR(rows.AddStrings("response", std::move(responses)));
  return rows;
}

absl::StatusOr<std::map<std::string, double>> SftTrainer::Validate() {
  ASSIGN_OR_RETURN(const auto batches, ValidationBatches(static_cast<int64_t>(val_.examples.size()),
                                                          recipe_.data().val_batch_size()));
  double weighted = 0, tokens = 0;
  for (const std::vector<int64_t>& indices : batches) {
    ASSIGN_OR_RETURN(const Batch rows, Rows(val_, indices));
    // Padding rows would count twice: a batch that does not split goes to rank 0 whole.
    std::vector<Batch> shards;
    if (rows.size() % policy_->world_size() == 0) {
      ASSIGN_OR_RETURN(shards, policy_->CallDpShards("actor.sft_loss", rows));
    } else {
      ASSIGN_OR_RETURN(Batch whole, policy_->CallRankZero("actor.sft_loss", rows));
      shards.push_back(std::move(whole));
    }
    for (const Batch& shard : shards) {
      ASSIGN_OR_RETURN(const auto metrics, GetBatchMetrics(shard));
      weighted += metrics.at("val/loss") * metrics.at("val/tokens");
      tokens += metrics.at("val/tokens");
    }
  }
  return std::map<std::string, double>{{"val/loss", tokens > 0 ? weighted / tokens : 0.0}};
}

absl::Status SftTrainer::Fit(MetricsLogger& logger) {
  if (recipe_.trainer().val_before_train() && !val_.examples.empty()) {
    ASSIGN_OR_RETURN(const auto metrics, Validate());
    RETURN_IF_ERROR(logger.Log(0, metrics));
  }
  for (int64_t step = 1; step <= total_steps_; ++step) {
    const auto start = std::chrono::steady_clock::now();
    const int64_t epoch = loader_->position().epoch;
    ASSIGN_OR_RETURN(const Batch rows, Rows(train_, loader_->Next()));
    absl::StatusOr<std::vector<Batch>> shards = policy_->CallDpShards("actor.sft_update", rows);
    if (!shards.ok()) {
      return absl::Status(shards.status().code(), absl::StrCat("step ", step, ": ", shards.status().message()));
    }
    std::map<std::string, double> metrics;
    for (const Batch& shard : *shards) {
      ASSIGN_OR_RETURN(const auto shard_metrics, GetBatchMetrics(shard));
      for (const auto& [name, value] : shard_metrics) metrics[name] += value / static_cast<double>(shards->size());
    }
    metrics["timing_s/step"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    metrics["training/global_step"] = static_cast<double>(step);
    metrics["training/epoch"] = static_cast<double>(epoch);
    if (!val_.examples.empty() && ValidatesAfter(recipe_.trainer(), step, total_steps_)) {
      ASSIGN_OR_RETURN(const auto val_metrics, Validate());
      metrics.insert(val_metrics.begin(), val_metrics.end());
    }
    RETURN_IF_ERROR(logger.Log(step, metrics));
  }
  return absl::OkStatus();
}

}  // namespace rollout::controller
