#include "controller/checkpoint_catalog.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "controller/checkpoint_layout.h"

namespace rollout::controller {
namespace {

// A directory without a manifest: what is on disk, for `ckpt ls`.
absl::Status DescribeWithoutManifest(FileSystem& fs, CheckpointInfo* info) {
  ASSIGN_OR_RETURN(std::vector<ManifestFile> files,
                   ScanCheckpointFiles(fs, info->path, /*checksums=*/false));
  std::set<std::string> roles;
  for (const ManifestFile& file : files) {
    info->bytes += file.size;
    const size_t slash = file.path.find('/');
    if (slash != std::string::npos) roles.insert(file.path.substr(0, slash));
  }
  info->roles.assign(roles.begin(), roles.end());
  return absl::OkStatus();
}

absl::Status FindUnfinishedRemovals(FileSystem& fs, const Manifest& manifest,
                                    CheckpointInfo* info) {
  for (const std::string& role : manifest.removed_roles) {
    ASSIGN_OR_RETURN(FileInfo role_dir, fs.Stat(JoinPath(info->path, role)));
    if (role_dir.exists) info->unfinished_removals.push_back(role);
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view CheckpointStateName(CheckpointState state) {
  switch (state) {
    case CheckpointState::kComplete:
      return "complete";
    case CheckpointState::kPartial:
      return "partial";
    case CheckpointState::kDeletedAfterLoad:
      return "deleted-after-load";
    case CheckpointState::kCorrupt:
      return "corrupt";
  }
  return "unknown";
}

absl::StatusOr<CheckpointInfo> InspectCheckpoint(FileSystem& fs, const std::string& dir,
                                                 VerifyLevel level) {
  CheckpointInfo info;
  info.step = ParseStepDirName(dir).value_or(-1);
  info.path = dir;
  absl::StatusOr<Manifest> manifest = ReadManifest(fs, dir);
  if (absl::IsNotFound(manifest.status())) {
    info.state = CheckpointState::kPartial;
    info.problem = "no MANIFEST.json: an interrupted save, or not written by rollout";
    RETURN_IF_ERROR(DescribeWithoutManifest(fs, &info));
    return info;
  }
  if (absl::IsDataLoss(manifest.status()) || absl::IsFailedPrecondition(manifest.status())) {
    info.state = CheckpointState::kCorrupt;
    info.problem = std::string(manifest.status().message());
    RETURN_IF_ERROR(DescribeWithoutManifest(fs, &info));
    return info;
  }
  RETURN_IF_ERROR(manifest.status());
  info.bytes = manifest->TotalBytes();
  info.roles = manifest->Roles();
  RETURN_IF_ERROR(FindUnfinishedRemovals(fs, *manifest, &info));
  const absl::Status verified = VerifyManifest(fs, dir, *manifest, level);
  if (absl::IsDataLoss(verified)) {
    info.state = CheckpointState::kCorrupt;
    info.problem = std::string(verified.message());
    return info;
  }
  RETURN_IF_ERROR(verified);
  if (manifest->deleted_after_load) {
    info.state = CheckpointState::kDeletedAfterLoad;
    info.problem =
        "its role directories were deleted after loading "
        "(trainer.del_local_ckpt_after_load)";
    return info;
  }
  info.state = CheckpointState::kComplete;
  return info;
}

absl::StatusOr<std::vector<CheckpointInfo>> ListCheckpoints(FileSystem& fs, const std::string& root,
                                                            VerifyLevel level) {
  ASSIGN_OR_RETURN(std::vector<std::string> names, fs.ListDirectory(root));
  std::vector<CheckpointInfo> checkpoints;
  for (const std::string& name : names) {
    if (!ParseStepDirName(name).has_value()) continue;
    const std::string dir = JoinPath(root, name);
    ASSIGN_OR_RETURN(FileInfo entry, fs.Stat(dir));
    if (!entry.is_directory) continue;
    ASSIGN_OR_RETURN(CheckpointInfo info, InspectCheckpoint(fs, dir, level));
    checkpoints.push_back(std::move(info));
  }
  std::sort(checkpoints.begin(), checkpoints.end(),
            [](const CheckpointInfo& a, const CheckpointInfo& b) { return a.step < b.step; });
  return checkpoints;
}

absl::StatusOr<std::optional<int64_t>> ReadTracker(FileSystem& fs, const std::string& root) {
  const std::string path = JoinPath(root, kTrackerFile);
  absl::StatusOr<std::string> contents = fs.ReadFile(path);
  if (absl::IsNotFound(contents.status())) return std::optional<int64_t>();
  RETURN_IF_ERROR(contents.status());
  ASSIGN_OR_RETURN(int64_t step, WithContext(ParseTracker(*contents), root));
  return std::optional<int64_t>(step);
}

absl::Status WriteTracker(FileSystem& fs, const std::string& root, int64_t step) {
  return ReplaceFileAtomically(fs, JoinPath(root, kTrackerFile), FormatTracker(step));
}

}  // namespace rollout::controller
