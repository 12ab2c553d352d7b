// CheckpointStore: saving and del_local_ckpt_after_load. Retention is in
// checkpoint_retention.cc, resuming in checkpoint_resume.cc.
#include "controller/checkpoint_store.h"

#include <functional>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/crash_point.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "controller/checkpoint_layout.h"
#include "controller/checkpoint_manifest.h"

namespace rollout::controller {

CheckpointStore::CheckpointStore(FileSystem* fs, std::string root, RetentionOptions retention)
    : fs_(fs), root_(std::move(root)), retention_(retention) {}

std::string CheckpointStore::StepDir(int64_t step) const {
  return JoinPath(root_, StepDirName(step));
}

std::string CheckpointStore::StagingDir(int64_t step) const {
  return JoinPath(root_, StagingDirName(step));
}

std::string CheckpointStore::DeletingDir(int64_t step) const {
  return JoinPath(root_, DeletingDirName(step));
}

absl::StatusOr<std::string> CheckpointStore::BeginSave(int64_t step) {
  if (step < 0) {
    return absl::InvalidArgumentError(absl::StrCat("checkpoint step ", step, " is negative"));
  }
  const std::string context = absl::StrCat("starting to save ", StepDirName(step), " in ", root_);
  RETURN_IF_ERROR(WithContext(fs_->MakeDirectories(root_), context));
  ASSIGN_OR_RETURN(std::vector<std::string> names, WithContext(fs_->ListDirectory(root_), context));
  for (const std::string& name : names) {
    if (IsScratchDirName(name)) {
      RETURN_IF_ERROR(WithContext(fs_->RemoveTree(JoinPath(root_, name)), context));
    }
  }
  CrashPoint("ckpt.begin_save.after_cleanup");
  const std::string staging = StagingDir(step);
  RETURN_IF_ERROR(WithContext(fs_->MakeDirectories(staging), context));
  return staging;
}

absl::Status CheckpointStore::CommitSave(int64_t step, absl::string_view trainer_state_json) {
  const std::string context = absl::StrCat("saving checkpoint ", StepDirName(step));
  const std::string staging = StagingDir(step);
  ASSIGN_OR_RETURN(FileInfo staged, WithContext(fs_->Stat(staging), context));
  if (!staged.is_directory) {
    return absl::FailedPreconditionError(absl::StrCat(context, ": no staging directory ", staging,
                                                      " (BeginSave was not called for this step)"));
  }
  RETURN_IF_ERROR(WithContext(
      fs_->WriteFileDurably(JoinPath(staging, kTrainerStateFile), trainer_state_json), context));
  CrashPoint("ckpt.save.after_trainer_state");
  RETURN_IF_ERROR(WithContext(WriteStagingManifest(staging), context));
  CrashPoint("ckpt.save.after_manifest");
  RETURN_IF_ERROR(WithContext(MoveIntoPlace(step), context));
  const absl::Status retention = ApplyRetention();
  if (!retention.ok()) {
    return absl::Status(retention.code(),
                        absl::StrCat(StepDirName(step), " saved, but ", retention.message()));
  }
  return absl::OkStatus();
}

absl::Status CheckpointStore::WriteStagingManifest(const std::string& staging) {
  ASSIGN_OR_RETURN(Manifest manifest, BuildManifest(*fs_, staging));
  // The workers fsynced their files; their directory entries become durable here,
  // deepest directories first, before the manifest vouches for them.
  std::set<std::string, std::greater<>> dirs;
  for (const ManifestFile& file : manifest.files) {
    for (std::string dir = Dirname(file.path); dir != "."; dir = Dirname(dir)) dirs.insert(dir);
  }
  for (const std::string& dir : dirs) RETURN_IF_ERROR(fs_->SyncDirectory(JoinPath(staging, dir)));
  RETURN_IF_ERROR(
      fs_->WriteFileDurably(JoinPath(staging, kManifestFile), ManifestToJson(manifest)));
  return fs_->SyncDirectory(staging);
}

absl::Status CheckpointStore::MoveIntoPlace(int64_t step) {
  const std::string target = StepDir(step);
  ASSIGN_OR_RETURN(FileInfo existing, fs_->Stat(target));
  if (!existing.exists) {
    RETURN_IF_ERROR(fs_->Rename(StagingDir(step), target));
  } else {
    // The staging name takes the replaced checkpoint; scratch names are never loaded.
    const absl::Status exchanged = fs_->ExchangePaths(StagingDir(step), target);
    if (absl::IsUnimplemented(exchanged)) {
      RETURN_IF_ERROR(MoveAsideWithoutExchange(step));
    } else {
      RETURN_IF_ERROR(exchanged);
    }
  }
  RETURN_IF_ERROR(fs_->SyncDirectory(root_));
  CrashPoint("ckpt.save.after_rename");
  RETURN_IF_ERROR(WriteTracker(*fs_, root_, step));
  CrashPoint("ckpt.save.after_tracker");
  if (!existing.exists) return absl::OkStatus();
  RETURN_IF_ERROR(fs_->RemoveTree(StagingDir(step)));
  RETURN_IF_ERROR(fs_->RemoveTree(DeletingDir(step)));
  CrashPoint("ckpt.save.after_remove_replaced");
  return absl::OkStatus();
}

absl::Status CheckpointStore::MoveAsideWithoutExchange(int64_t step) {
  ASSIGN_OR_RETURN(std::optional<int64_t> tracker, ReadTracker(*fs_, root_));
  if (tracker == step) {
    ASSIGN_OR_RETURN(std::vector<CheckpointInfo> checkpoints,
                     ListCheckpoints(*fs_, root_, VerifyLevel::kSizes));
    std::optional<int64_t> previous;
    for (const CheckpointInfo& checkpoint : checkpoints) {
      if (checkpoint.state == CheckpointState::kComplete && checkpoint.step < step) {
        previous = checkpoint.step;
      }
    }
    if (!previous.has_value()) {
      return absl::FailedPreconditionError(absl::StrCat(
          StepDir(step),
          " exists, the filesystem cannot swap directories atomically "
          "(no RENAME_EXCHANGE) and no older complete checkpoint exists for the tracker to "
          "name meanwhile; move ",
          StepDir(step), " away and save again"));
    }
    RETURN_IF_ERROR(WriteTracker(*fs_, root_, *previous));
    CrashPoint("ckpt.save.after_tracker_fallback");
  }
  RETURN_IF_ERROR(fs_->RemoveTree(DeletingDir(step)));
  RETURN_IF_ERROR(fs_->Rename(StepDir(step), DeletingDir(step)));
  RETURN_IF_ERROR(fs_->SyncDirectory(root_));
  CrashPoint("ckpt.save.after_hide_replaced");
  return fs_->Rename(StagingDir(step), StepDir(step));
}

absl::Status CheckpointStore::DeleteAfterLoad(int64_t step) {
  const std::string context = absl::StrCat("deleting ", StepDirName(step), " after loading");
  const std::string dir = StepDir(step);
  absl::StatusOr<Manifest> manifest = ReadManifest(*fs_, dir);
  if (absl::IsNotFound(manifest.status())) {
    return absl::NotFoundError(absl::StrCat(context, ": ", dir, " has no ", kManifestFile));
  }
  RETURN_IF_ERROR(WithContext(manifest.status(), context));
  Manifest rewritten = manifest->WithoutRoles(manifest->Roles());
  rewritten.deleted_after_load = true;
  return WithContext(RemoveRoleDirectories(*fs_, dir, rewritten, rewritten.removed_roles,
                                           "ckpt.delete_after_load.after_manifest_rewrite",
                                           "ckpt.delete_after_load.after_remove_role"),
                     context);
}

}  // namespace rollout::controller
