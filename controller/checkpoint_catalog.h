// What is in a checkpoint root directory R: each global_step_N directory with its
// state, and the tracker file. Read-only except WriteTracker(). Used by
// CheckpointStore (retention, resume) and by `rollout ckpt ls|verify`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/file_system.h"
#include "controller/checkpoint_manifest.h"

namespace rollout::controller {

enum class CheckpointState {
  kComplete,          // MANIFEST.json present and the files match it
  kPartial,           // no MANIFEST.json: an interrupted or foreign save; never loaded
  kDeletedAfterLoad,  // del_local_ckpt_after_load removed its role directories
  kCorrupt,           // a manifest that does not parse or files that do not match it
};

// "complete", "partial", "deleted-after-load", "corrupt".
absl::string_view CheckpointStateName(CheckpointState state);

struct CheckpointInfo {
  int64_t step = 0;
  std::string path;  // R/global_step_N
  CheckpointState state = CheckpointState::kPartial;
  std::string problem;             // why it is not complete; "" when it is
  uint64_t bytes = 0;              // the manifest's total, or what is on disk without one
  std::vector<std::string> roles;  // role directories it holds ("actor", "critic")
  // Roles the manifest says were removed whose directories are still on disk (an
  // interrupted removal, finished by the next retention).
  std::vector<std::string> unfinished_removals;
};

// The state of one checkpoint directory, checked at `level`. Damage is reported in
// the state and `problem`; an error only when the directory cannot be read.
absl::StatusOr<CheckpointInfo> InspectCheckpoint(FileSystem& fs, const std::string& dir,
                                                 VerifyLevel level);

// Every global_step_N directory directly under `root`, by step. Other entries (the
// tracker, scratch directories, anything else) are not listed. NotFound when
// `root` does not exist.
absl::StatusOr<std::vector<CheckpointInfo>> ListCheckpoints(FileSystem& fs, const std::string& root,
                                                            VerifyLevel level);

// The step in R/latest_checkpointed_iteration.txt; nullopt when there is no
// tracker; DataLoss naming the file when it does not hold a step.
absl::StatusOr<std::optional<int64_t>> ReadTracker(FileSystem& fs, const std::string& root);

// Replaces the tracker atomically (temporary file, fsync, rename, fsync of R).
absl::Status WriteTracker(FileSystem& fs, const std::string& root, int64_t step);

}  // namespace rollout::controller
