#include "workers/critic_worker.h"

#include <ATen/ATen.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/batch_metrics.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "models/tokenizer_files.h"
#include "workers/optimizer_shards.h"
#include "workers/role_options.h"

namespace rollout::workers {
namespace {

// Rows per rank of the critic's mini-batch: critic.ppo_mini_batch_size prompts x
// rollout.n, split over the data-parallel world.
absl::StatusOr<int64_t> MiniBatchRowsPerRank(const config::Recipe& recipe, int world) {
  const int64_t rows = int64_t{recipe.critic().ppo_mini_batch_size()} * recipe.rollout().n();
  if (rows % world != 0) {
    return absl::InvalidArgumentError(absl::StrCat("critic.ppo_mini_batch_size x rollout.n = ", rows,
                                                   " rows do not split over ", world, " critic workers"));
  }
  return rows / world;
}

ValueCriticOptions CriticOptionsFrom(const config::Recipe& recipe, int64_t total_training_steps) {
  const config::CriticConfig& critic = recipe.critic();
  ValueCriticOptions options;
  options.plan.micro_batch = MicroBatchSizeOf(config::UpdateCriticBatching(recipe));
  options.plan.epochs = critic.ppo_epochs();
  options.plan.grad_clip = critic.grad_clip();
  options.plan.shuffle = critic.shuffle();
  options.plan.shuffle_seed =
      static_cast<uint64_t>(critic.has_data_loader_seed() ? critic.data_loader_seed() : recipe.trainer().seed());
  options.value_loss.cliprange_value = critic.cliprange_value();
  options.value_loss.loss_agg_mode = critic.loss_agg_mode();
  options.adamw = AdamWFrom(critic.optim());
  options.lr_schedule = ScheduleFrom(critic.optim(), total_training_steps);
  return options;
}

// critic.model.path, or actor.model.path (verl's default).
const std::string& CriticModelPath(const config::Recipe& recipe) {
  const std::string& path = recipe.critic().model().path();
  return path.empty() ? recipe.actor().model().path() : path;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CriticWorker>> CriticWorker::Create(const CriticWorkerSetup& setup) {
  const config::Recipe& recipe = setup.recipe;
  const config::ModelConfig& model = recipe.critic().model();
  if (model.lora_rank() > 0) {
    return absl::UnimplementedError(absl::StrCat("critic.model.lora_rank is ", model.lora_rank(),
                                                 "; this build trains the critic's full weights only: set it to 0"));
  }
  if (!model.lora_adapter_path().empty()) {
    return absl::UnimplementedError(absl::StrCat("critic.model.lora_adapter_path is ", model.lora_adapter_path(),
                                                 "; this build trains the critic's full weights only: leave it empty"));
  }
  const std::string& path = CriticModelPath(recipe);
  if (path.empty()) {
    return absl::InvalidArgumentError("critic.model.path is not set, nor actor.model.path (its default)");
  }
  ValueCriticOptions options = CriticOptionsFrom(recipe, setup.total_training_steps);
  ASSIGN_OR_RETURN(options.plan.mini_batch_rows, MiniBatchRowsPerRank(recipe, setup.world));
  options.plan.data_parallel = setup.data_parallel;
  models::LoadOptions load;
  load.device = setup.device;
  load.dtype = DtypeOf(model.dtype());
  // The value head of a causal LM starts from the run's seed.
  absl::StatusOr<std::unique_ptr<models::ValueModel>> loaded =
      models::ValueModel::Load(path, load, static_cast<uint64_t>(recipe.trainer().seed()));
  if (!loaded.ok()) {
    return absl::Status(loaded.status().code(),
                        absl::StrCat("critic model '", path, "': ", loaded.status().message()));
  }
  (*loaded)->set_activation_checkpointing(model.enable_gradient_checkpointing());
  std::unique_ptr<CriticWorker> worker(new CriticWorker(setup, *std::move(loaded)));
  ASSIGN_OR_RETURN(worker->critic_, ValueCritic::Create(worker->model_.get(), options));
  const AdamW& optimizer = worker->critic_->optimizer();
  if (optimizer.sharded()) ROLLOUT_LOG(INFO) << "critic: " << ShareOf(optimizer);
  return worker;
}

absl::StatusOr<ValueBatch> CriticWorker::ValueBatchFrom(const Batch& input, bool for_update) const {
  ValueBatch batch;
  std::vector<std::pair<const char*, at::Tensor*>> columns = {{"input_ids", &batch.input_ids},
                                                              {"attention_mask", &batch.attention_mask},
                                                              {"position_ids", &batch.position_ids},
                                                              {"response_mask", &batch.response_mask}};
  if (for_update) {
    columns.push_back({"values", &batch.values});
    columns.push_back({"returns", &batch.returns});
  }
  for (const auto& [name, tensor] : columns) {
    ASSIGN_OR_RETURN(const at::Tensor column, input.Tensor(name));
    *tensor = column.to(setup_.device);
  }
  return batch;
}

absl::StatusOr<Batch> CriticWorker::ComputeValues(const Batch& input) const {
  ASSIGN_OR_RETURN(const ValueBatch batch, ValueBatchFrom(input, /*for_update=*/false));
  ASSIGN_OR_RETURN(const at::Tensor values,
                   critic_->ComputeValues(batch, MicroBatchSizeOf(config::CriticValuesBatching(setup_.recipe))));
  Batch output;
  RETURN_IF_ERROR(output.AddTensor("values", values.cpu()));
  return output;
}

absl::StatusOr<Batch> CriticWorker::UpdateCritic(const Batch& input) {
  RETURN_IF_ERROR(pending_save_.Wait());
  ASSIGN_OR_RETURN(const ValueBatch batch, ValueBatchFrom(input, /*for_update=*/true));
  ASSIGN_OR_RETURN(const auto metrics, critic_->Update(batch));
  Batch output;
  SetBatchMetrics(metrics, &output);
  return output;
}

RoleCheckpoint CriticWorker::CriticCheckpoint() {
  RoleCheckpoint role;
  role.device = setup_.device;
  role.optimizer = &critic_->optimizer();
  role.updates = critic_->mutable_updates();
  for (const auto& [name, tensor] : model_->NamedParameters()) role.trainable_names.push_back(name);
  role.save_model = [this](const std::string& dir) {
    return SaveNamedTensors(JoinPath(dir, kModelFile), model_->NamedParameters());
  };
  role.load_model = [this](const std::string& dir) {
    return LoadNamedTensors(JoinPath(dir, kModelFile), model_->NamedParameters());
  };
  role.save_hf_model = [this](const std::string& dir) -> absl::Status {
    RETURN_IF_ERROR(model_->Save(dir));
    const config::ModelConfig& model = setup_.recipe.critic().model();
    return models::CopyTokenizerFiles(
        model.tokenizer_path().empty() ? CriticModelPath(setup_.recipe) : model.tokenizer_path(), dir);
  };
  return role;
}

absl::StatusOr<Batch> CriticWorker::SaveCheckpoint(const Batch& input) {
  ASSIGN_OR_RETURN(const std::string dir, CheckpointDirOf(input, "critic.save_checkpoint"));
  ASSIGN_OR_RETURN(const CheckpointParts parts,
                   ParseCheckpointParts(setup_.recipe.critic().checkpoint().save_contents(),
                                        "critic.checkpoint.save_contents"));
  RETURN_IF_ERROR(pending_save_.Wait());
  RoleCheckpoint role = CriticCheckpoint();
  RETURN_IF_ERROR(WithContext(GatherForSave(setup_.data_parallel, parts, role),
                              absl::StrCat("critic.save_checkpoint to ", dir)));
  // One copy is written, by rank 0 (which now holds all of a sharded optimizer's state).
  if (setup_.rank != 0) return Batch();
  if (input.Meta("async") == "1") {
    RETURN_IF_ERROR(pending_save_.Start(std::move(role), parts, dir));
    return Batch();
  }
  RETURN_IF_ERROR(WithContext(SaveRoleCheckpoint(role, parts, dir), absl::StrCat("critic.save_checkpoint to ", dir)));
  return Batch();
}

absl::StatusOr<Batch> CriticWorker::WaitCheckpoint(const Batch& input) {
  RETURN_IF_ERROR(WithContext(pending_save_.Wait(), "critic.wait_checkpoint"));
  return Batch();
}

absl::StatusOr<Batch> CriticWorker::LoadCheckpoint(const Batch& input) {
  ASSIGN_OR_RETURN(const std::string dir, CheckpointDirOf(input, "critic.load_checkpoint"));
  ASSIGN_OR_RETURN(const CheckpointParts parts,
                   ParseCheckpointParts(setup_.recipe.critic().checkpoint().load_contents(),
                                        "critic.checkpoint.load_contents"));
  RETURN_IF_ERROR(pending_save_.Wait());
  RETURN_IF_ERROR(WithContext(LoadRoleCheckpoint(CriticCheckpoint(), parts, dir),
                              absl::StrCat("critic.load_checkpoint from ", dir)));
  return Batch();
}

absl::Status CriticWorker::RegisterMethods(MethodRegistry* registry) {
  const std::vector<std::pair<const char*, WorkerMethod>> methods = {
      {"critic.compute_values", [this](const Batch& in) { return ComputeValues(in); }},
      {"critic.update_critic", [this](const Batch& in) { return UpdateCritic(in); }},
      {"critic.save_checkpoint", [this](const Batch& in) { return SaveCheckpoint(in); }},
      {"critic.load_checkpoint", [this](const Batch& in) { return LoadCheckpoint(in); }},
      {"critic.wait_checkpoint", [this](const Batch& in) { return WaitCheckpoint(in); }},
  };
  for (const auto& [name, method] : methods) RETURN_IF_ERROR(registry->Register(name, method));
  return absl::OkStatus();
}

}  // namespace rollout::workers
