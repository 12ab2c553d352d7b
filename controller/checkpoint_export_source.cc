#include "controller/checkpoint_export_source.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "controller/checkpoint_catalog.h"
#include "controller/checkpoint_layout.h"

namespace rollout::controller {
namespace {

constexpr char kActorRole[] = "actor";

// The global_step_N directory `path` (normalized, an existing directory) names.
absl::StatusOr<std::string> CheckpointDirOf(FileSystem& fs, const std::string& path) {
  if (ParseStepDirName(path).has_value()) return path;
  const std::string parent = Dirname(path);
  if (JoinPath(parent, kActorRole) == path && ParseStepDirName(parent).has_value()) return parent;
  ASSIGN_OR_RETURN(const std::optional<int64_t> tracker, ReadTracker(fs, path));
  if (!tracker.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, " is not a checkpoint: expected a ", kStepDirPrefix, "N directory, its ", kActorRole,
        "/ directory, or a checkpoint root with ", kTrackerFile));
  }
  const std::string dir = JoinPath(path, StepDirName(*tracker));
  ASSIGN_OR_RETURN(const FileInfo entry, fs.Stat(dir));
  if (!entry.is_directory) {
    return absl::DataLossError(absl::StrCat(JoinPath(path, kTrackerFile), " names ",
                                            StepDirName(*tracker), ", which does not exist"));
  }
  return dir;
}

}  // namespace

absl::StatusOr<ExportSource> LocateExportSource(FileSystem& fs, const std::string& path) {
  const std::string normalized = NormalizePath(path);
  ASSIGN_OR_RETURN(const FileInfo entry, fs.Stat(normalized));
  if (!entry.exists) return absl::NotFoundError(absl::StrCat(path, " does not exist"));
  if (!entry.is_directory) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a checkpoint: it is a file"));
  }
  ASSIGN_OR_RETURN(const std::string dir, CheckpointDirOf(fs, normalized));
  ASSIGN_OR_RETURN(const CheckpointInfo info, InspectCheckpoint(fs, dir, VerifyLevel::kChecksums));
  const std::string name = absl::StrCat("checkpoint ", StepDirName(info.step));
  switch (info.state) {
    case CheckpointState::kComplete:
      break;
    case CheckpointState::kPartial:
      return absl::FailedPreconditionError(absl::StrCat(name, " is partial: ", info.problem));
    case CheckpointState::kDeletedAfterLoad:
      return absl::FailedPreconditionError(absl::StrCat(
          name, " was deleted after loading (trainer.del_local_ckpt_after_load); only its ",
          kTrainerStateFile, " is left"));
    case CheckpointState::kCorrupt:
      return absl::DataLossError(absl::StrCat(name, ": ", info.problem));
  }
  if (std::find(info.roles.begin(), info.roles.end(), kActorRole) == info.roles.end()) {
    return absl::FailedPreconditionError(absl::StrCat(name, " has no ", kActorRole,
                                                      " directory (it holds: ",
                                                      absl::StrJoin(info.roles, ", "), ")"));
  }
  return ExportSource{dir, JoinPath(dir, kActorRole)};
}

}  // namespace rollout::controller
