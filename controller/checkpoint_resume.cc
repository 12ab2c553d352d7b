// Resuming: ParseResumeMode() and CheckpointStore::ResolveResume().
#include "controller/checkpoint_resume.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "controller/checkpoint_layout.h"
#include "controller/checkpoint_store.h"

namespace rollout::controller {
namespace {

constexpr char kDeletedAfterLoad[] =
    " was deleted after loading (trainer.del_local_ckpt_after_load)";

// The checkpoint at `dir`, verified byte for byte, or why it cannot be loaded.
absl::StatusOr<ResumeDecision> LoadableCheckpoint(FileSystem& fs, const std::string& dir,
                                                  int64_t step) {
  const std::string name = absl::StrCat("checkpoint ", StepDirName(step));
  ASSIGN_OR_RETURN(FileInfo entry, fs.Stat(dir));
  if (!entry.is_directory) {
    return absl::NotFoundError(absl::StrCat(name, ": ", dir, " does not exist"));
  }
  ASSIGN_OR_RETURN(CheckpointInfo checkpoint,
                   WithContext(InspectCheckpoint(fs, dir, VerifyLevel::kChecksums), name));
  switch (checkpoint.state) {
    case CheckpointState::kComplete:
      return ResumeDecision{step, dir, checkpoint.roles, absl::StrCat("resuming from ", dir)};
    case CheckpointState::kDeletedAfterLoad:
      return absl::FailedPreconditionError(
          absl::StrCat(name, kDeletedAfterLoad, "; only its ", kTrainerStateFile, " is left"));
    case CheckpointState::kPartial:
    case CheckpointState::kCorrupt:
      break;
  }
  return absl::DataLossError(absl::StrCat(name, ": ", checkpoint.problem));
}

const CheckpointInfo* FindStep(const std::vector<CheckpointInfo>& checkpoints, int64_t step) {
  for (const CheckpointInfo& checkpoint : checkpoints) {
    if (checkpoint.step == step) return &checkpoint;
  }
  return nullptr;
}

// The newest checkpoint with a manifest (nullptr when none), and the names of newer
// directories without one: interrupted or foreign saves, never loaded.
const CheckpointInfo* NewestWithManifest(const std::vector<CheckpointInfo>& checkpoints,
                                         std::vector<std::string>* newer_partial) {
  const CheckpointInfo* newest = nullptr;
  for (const CheckpointInfo& checkpoint : checkpoints) {
    if (checkpoint.state != CheckpointState::kPartial) {
      newest = &checkpoint;
      newer_partial->clear();
    } else {
      newer_partial->push_back(StepDirName(checkpoint.step));
    }
  }
  return newest;
}

}  // namespace

absl::StatusOr<ResumeMode> ParseResumeMode(absl::string_view text) {
  if (text == "auto") return ResumeMode::kAuto;
  if (text == "disable") return ResumeMode::kDisable;
  if (text == "resume_path") return ResumeMode::kResumePath;
  return absl::InvalidArgumentError(
      absl::StrCat("trainer.resume_mode must be auto, disable or resume_path, not '", text, "'"));
}

absl::StatusOr<ResumeDecision> CheckpointStore::ResolveResume(ResumeMode mode,
                                                              const std::string& resume_from_path) {
  switch (mode) {
    case ResumeMode::kDisable:
      return ResumeDecision{std::nullopt, "", {}, "trainer.resume_mode is disable: starting fresh"};
    case ResumeMode::kAuto:
      return ResolveAuto();
    case ResumeMode::kResumePath:
      break;
  }
  if (resume_from_path.empty()) {
    return absl::InvalidArgumentError(
        "trainer.resume_mode is resume_path but trainer.resume_from_path is empty");
  }
  const std::optional<int64_t> step = ParseStepDirName(resume_from_path);
  if (!step.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat("trainer.resume_from_path ", resume_from_path,
                                                   " does not name a global_step_N directory"));
  }
  return LoadableCheckpoint(*fs_, resume_from_path, *step);
}

absl::StatusOr<ResumeDecision> CheckpointStore::ResolveAuto() {
  const std::string fresh = absl::StrCat("no checkpoint in ", root_, ", starting fresh");
  ASSIGN_OR_RETURN(FileInfo root, fs_->Stat(root_));
  if (!root.is_directory) return ResumeDecision{std::nullopt, "", {}, fresh};
  ASSIGN_OR_RETURN(std::vector<CheckpointInfo> checkpoints,
                   ListCheckpoints(*fs_, root_, VerifyLevel::kSizes));
  ASSIGN_OR_RETURN(std::optional<int64_t> tracker, ReadTracker(*fs_, root_));
  const std::string tracker_path = JoinPath(root_, kTrackerFile);
  const CheckpointInfo* tracked = tracker.has_value() ? FindStep(checkpoints, *tracker) : nullptr;
  if (tracker.has_value() && tracked == nullptr) {
    return absl::DataLossError(
        absl::StrCat(tracker_path, " names ", StepDirName(*tracker), ", which does not exist"));
  }
  std::vector<std::string> skipped;
  const CheckpointInfo* newest = NewestWithManifest(checkpoints, &skipped);
  if (newest == nullptr) {
    if (checkpoints.empty()) return ResumeDecision{std::nullopt, "", {}, fresh};
    return absl::DataLossError(absl::StrCat("no complete checkpoint in ", root_, ": ",
                                            StepDirName(checkpoints.back().step), " has ",
                                            checkpoints.back().problem));
  }
  if (tracker.has_value() && *tracker > newest->step) {
    return absl::DataLossError(absl::StrCat(tracker_path, " names ", StepDirName(*tracker),
                                            ", which has ", tracked->problem));
  }
  if (newest->state == CheckpointState::kDeletedAfterLoad) {
    return absl::FailedPreconditionError(absl::StrCat(
        "checkpoint ", StepDirName(newest->step), kDeletedAfterLoad,
        " and no newer checkpoint exists; to go on, set trainer.resume_mode=disable (start "
        "fresh) or trainer.resume_mode=resume_path with trainer.resume_from_path naming an "
        "older checkpoint"));
  }
  ASSIGN_OR_RETURN(ResumeDecision decision, LoadableCheckpoint(*fs_, newest->path, newest->step));
  if (!tracker.has_value() || *tracker < newest->step) {
    RETURN_IF_ERROR(WriteTracker(*fs_, root_, newest->step));
    absl::StrAppend(&decision.message,
                    tracker.has_value()
                        ? absl::StrCat(" (the tracker named ", StepDirName(*tracker),
                                       ", behind it: a save was interrupted "
                                       "before updating it; repaired)")
                        : " (there was no tracker; written)");
  }
  if (!skipped.empty()) {
    absl::StrAppend(&decision.message, "; ignored ", absl::StrJoin(skipped, ", "), ": no ",
                    kManifestFile);
  }
  return decision;
}

}  // namespace rollout::controller
