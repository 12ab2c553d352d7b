// PolicyWorker: actor.save_checkpoint and actor.load_checkpoint (the rest of the class
// is in policy_worker.cc).
#include "workers/policy_worker.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "models/safetensors.h"
#include "workers/optimizer_shards.h"

namespace rollout::workers {

RoleCheckpoint PolicyWorker::ActorCheckpoint() {
  const config::ModelConfig& model = setup_.recipe.actor().model();
  RoleCheckpoint role;
  role.device = setup_.device;
  // The learner trainer.mode trains; a PPO run's warm-start SFT learner is done by the
  // time anything is saved, and its state is not resumed.
  if (actor_ != nullptr) {
    role.optimizer = &actor_->optimizer();
    role.updates = actor_->mutable_updates();
  } else if (dpo_ != nullptr) {
    role.optimizer = &dpo_->optimizer();
    role.updates = dpo_->mutable_updates();
  } else {
    role.optimizer = &sft_->optimizer();
    role.updates = sft_->mutable_updates();
  }
  for (const auto& [name, tensor] : NamedTrainable()) role.trainable_names.push_back(name);
  if (lora_.has_value()) {
    // The base weights are actor.model.path's; only the adapter is state. The path is
    // recorded absolute, so that `rollout ckpt export` finds the base from any directory.
    role.save_model = [this, &model](const std::string& dir) {
      return models::SaveLoraAdapter(*model_, *lora_, JoinPath(dir, kLoraAdapterDir),
                                     FileIdentity(model.path()));
    };
    role.load_model = [this](const std::string& dir) {
      return LoadNamedTensors(JoinPath(JoinPath(dir, kLoraAdapterDir), "adapter_model.safetensors"),
                              models::NamedLoraParameters(*model_));
    };
  } else {
    // A refreshed reference (ref.sync_ref_model) is state too. A checkpoint without one
    // was saved by a run that never refreshed it: the reference loaded at start is it.
    role.save_model = [this](const std::string& dir) {
      RETURN_IF_ERROR(SaveNamedTensors(JoinPath(dir, kModelFile), model_->NamedParameters()));
      if (!SyncsReference()) return absl::OkStatus();
      return SaveNamedTensors(JoinPath(dir, kRefModelFile), ref_model_->NamedParameters());
    };
    role.load_model = [this](const std::string& dir) {
      RETURN_IF_ERROR(LoadNamedTensors(JoinPath(dir, kModelFile), model_->NamedParameters()));
      if (!SyncsReference()) return absl::OkStatus();
      const absl::Status reference = LoadNamedTensors(JoinPath(dir, kRefModelFile), ref_model_->NamedParameters());
      return absl::IsNotFound(reference) ? absl::OkStatus() : reference;
    };
  }
  role.save_hf_config = [this, &model](const std::string& dir) {
    return SaveHfConfigFiles(model_->config(), model.path(),
                             model.tokenizer_path().empty() ? model.path() : model.tokenizer_path(), dir);
  };
  // The base weights (with LoRA, the adapter stays in lora_adapter/).
  role.save_hf_model = [this](const std::string& dir) {
    const std::map<std::string, at::Tensor> tensors = model_->BaseTensors();
    return models::WriteSafetensors(JoinPath(dir, kModelFile), {tensors.begin(), tensors.end()},
                                    {{"format", "pt"}});
  };
  return role;
}

absl::StatusOr<Batch> PolicyWorker::SaveCheckpoint(const Batch& input) {
  ASSIGN_OR_RETURN(const std::string dir, CheckpointDirOf(input, "actor.save_checkpoint"));
  ASSIGN_OR_RETURN(const CheckpointParts parts,
                   ParseCheckpointParts(setup_.recipe.actor().checkpoint().save_contents(),
                                        "actor.checkpoint.save_contents"));
  RETURN_IF_ERROR(pending_save_.Wait());
  RoleCheckpoint role = ActorCheckpoint();
  RETURN_IF_ERROR(WithContext(GatherForSave(setup_.data_parallel, parts, role),
                              absl::StrCat("actor.save_checkpoint to ", dir)));
  // One copy is written, by rank 0 (which now holds all of a sharded optimizer's state).
  if (setup_.rank != 0) return Batch();
  if (input.Meta("async") == "1") {
    RETURN_IF_ERROR(pending_save_.Start(std::move(role), parts, dir));
    return Batch();
  }
  RETURN_IF_ERROR(WithContext(SaveRoleCheckpoint(role, parts, dir), absl::StrCat("actor.save_checkpoint to ", dir)));
  return Batch();
}

absl::StatusOr<Batch> PolicyWorker::WaitCheckpoint(const Batch& input) {
  RETURN_IF_ERROR(WithContext(pending_save_.Wait(), "actor.wait_checkpoint"));
  return Batch();
}

absl::StatusOr<Batch> PolicyWorker::LoadCheckpoint(const Batch& input) {
  ASSIGN_OR_RETURN(const std::string dir, CheckpointDirOf(input, "actor.load_checkpoint"));
  ASSIGN_OR_RETURN(const CheckpointParts parts,
                   ParseCheckpointParts(setup_.recipe.actor().checkpoint().load_contents(),
                                        "actor.checkpoint.load_contents"));
  RETURN_IF_ERROR(pending_save_.Wait());
  RETURN_IF_ERROR(WithContext(LoadRoleCheckpoint(ActorCheckpoint(), parts, dir),
                              absl::StrCat("actor.load_checkpoint from ", dir)));
  WeightsChanged();
  return Batch();
}

}  // namespace rollout::workers
