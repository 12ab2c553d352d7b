#include "controller/trainer_checkpoints.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "controller/checkpoint_layout.h"

namespace rollout::controller {
namespace {

RetentionOptions RetentionFrom(const config::TrainerConfig& trainer) {
  RetentionOptions retention;
  retention.max_actor_ckpt_to_keep = trainer.max_actor_ckpt_to_keep();
  retention.max_critic_ckpt_to_keep = trainer.max_critic_ckpt_to_keep();
  return retention;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TrainerCheckpoints>> TrainerCheckpoints::Create(
    const config::Recipe& recipe, std::vector<CheckpointedRole> roles, FileSystem* fs) {
  ASSIGN_OR_RETURN(const ResumeMode mode, ParseResumeMode(recipe.trainer().resume_mode()));
  std::unique_ptr<TrainerCheckpoints> checkpoints(
      new TrainerCheckpoints(recipe.trainer(), mode, std::move(roles), fs));
  checkpoints->fingerprint_ = RecipeFingerprint(recipe);
  checkpoints->async_save_ = recipe.actor().checkpoint().async_save();
  return checkpoints;
}

TrainerCheckpoints::TrainerCheckpoints(const config::TrainerConfig& trainer, ResumeMode mode,
                                       std::vector<CheckpointedRole> roles, FileSystem* fs)
    : trainer_(trainer),
      mode_(mode),
      roles_(std::move(roles)),
      fs_(fs),
      store_(fs, trainer.default_local_dir(), RetentionFrom(trainer)) {}

absl::Status TrainerCheckpoints::CallRoles(const std::string& method, const std::string& checkpoint_dir,
                                           bool async) {
  for (const CheckpointedRole& role : roles_) {
    const std::string dir = JoinPath(checkpoint_dir, role.name);
    Batch input;
    input.SetMeta("dir", dir);
    if (async) input.SetMeta("async", "1");
    RETURN_IF_ERROR(WithContext(role.group->CallAll(absl::StrCat(role.name, ".", method), input).status(),
                                absl::StrCat(role.name, " (", dir, ")")));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<TrainerState>> TrainerCheckpoints::Resume() {
  ASSIGN_OR_RETURN(const ResumeDecision decision, store_.ResolveResume(mode_, trainer_.resume_from_path()));
  ROLLOUT_LOG(INFO) << decision.message;
  if (!decision.step.has_value()) return std::nullopt;
  const std::string context = absl::StrCat("resuming from ", decision.path);
  for (const CheckpointedRole& role : roles_) {
    if (std::find(decision.roles.begin(), decision.roles.end(), role.name) == decision.roles.end()) {
      return absl::FailedPreconditionError(absl::StrCat(
          context, ": it has no ", role.name, "/ directory (retention keeps trainer.max_", role.name,
          "_ckpt_to_keep of them); resume from a checkpoint that has one (trainer.resume_mode=resume_path)"));
    }
  }
  const std::string state_path = JoinPath(decision.path, kTrainerStateFile);
  ASSIGN_OR_RETURN(const std::string text, WithContext(fs_->ReadFile(state_path), context));
  ASSIGN_OR_RETURN(TrainerState state, WithContext(TrainerState::FromJson(text, state_path), context));
  if (state.global_step != *decision.step) {
    return absl::DataLossError(
        absl::StrCat(context, ": ", state_path, " says global_step ", state.global_step));
  }
  RETURN_IF_ERROR(WithContext(CallRoles("load_checkpoint", decision.path), context));
  if (state.recipe_fingerprint != fingerprint_) {
    ROLLOUT_LOG(WARNING) << StepDirName(state.global_step) << " was saved with a recipe of fingerprint "
                         << state.recipe_fingerprint << "; this one's is " << fingerprint_
                         << ": data, model or algorithm keys changed, so the run will not match an "
                            "uninterrupted one";
  }
  if (trainer_.del_local_ckpt_after_load()) {
    // Every rank has loaded. The store of the checkpoint's own directory: with
    // resume_path it need not be trainer.default_local_dir.
    CheckpointStore loaded_from(fs_, Dirname(decision.path));
    RETURN_IF_ERROR(WithContext(loaded_from.DeleteAfterLoad(state.global_step), context));
    ROLLOUT_LOG(INFO) << "deleted the role directories of " << decision.path
                      << " (trainer.del_local_ckpt_after_load); its " << kTrainerStateFile << " stays";
  }
  return state;
}

bool TrainerCheckpoints::SaveDue(int64_t step, int64_t total_steps) const {
  const int64_t every = trainer_.save_freq();
  return every > 0 && (step % every == 0 || step == total_steps);
}

absl::Status TrainerCheckpoints::Save(const TrainerState& state) {
  RETURN_IF_ERROR(FinishSave());
  const std::string context = absl::StrCat("saving ", StepDirName(state.global_step));
  ASSIGN_OR_RETURN(const std::string staging, store_.BeginSave(state.global_step));
  RETURN_IF_ERROR(WithContext(CallRoles("save_checkpoint", staging, async_save_), context));
  if (async_save_) {
    pending_ = state;
    return absl::OkStatus();
  }
  return store_.CommitSave(state.global_step, state.ToJson());
}

absl::Status TrainerCheckpoints::FinishSave() {
  if (!pending_.has_value()) return absl::OkStatus();
  const TrainerState state = *std::move(pending_);
  pending_.reset();
  const std::string context = absl::StrCat("saving ", StepDirName(state.global_step), " asynchronously");
  RETURN_IF_ERROR(WithContext(CallRoles("wait_checkpoint", store_.root()), context));
  return store_.CommitSave(state.global_step, state.ToJson());
}

}  // namespace rollout::controller
