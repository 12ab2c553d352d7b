// Names in a checkpoint root directory R (trainer.default_local_dir), as verl lays
// it out:
//   R/global_step_40/{actor,critic}/...      what the workers wrote
//   R/global_step_40/trainer_state.json      the controller's state
//   R/global_step_40/MANIFEST.json           every other file, written last
//   R/latest_checkpointed_iteration.txt      "40", replaced atomically
// plus hidden scratch directories of CheckpointStore (a save in progress, a
// checkpoint being deleted), which are never loaded and are removed when found.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::controller {

inline constexpr char kTrackerFile[] = "latest_checkpointed_iteration.txt";
inline constexpr char kTrainerStateFile[] = "trainer_state.json";
inline constexpr char kManifestFile[] = "MANIFEST.json";
inline constexpr char kStepDirPrefix[] = "global_step_";

// "global_step_40".
std::string StepDirName(int64_t step);

// The step of a checkpoint directory, read from the LAST component of `path` only
// (a trailing '/' is ignored), so "runs/global_step_7/ckpt" is not a checkpoint.
// The number is decimal digits without sign or leading zeros ("global_step_0" is
// fine); "global_step_", "global_step_-1", "global_step_12abc" and
// "global_step_007" give nullopt.
std::optional<int64_t> ParseStepDirName(absl::string_view path);

// ".global_step_40.partial": where a save is written before it is renamed into
// place. ".global_step_40.deleting": a checkpoint on its way out.
std::string StagingDirName(int64_t step);
std::string DeletingDirName(int64_t step);
// True for both kinds of scratch name above (any step).
bool IsScratchDirName(absl::string_view name);

// The tracker's contents: the step as decimal text, as verl writes it.
std::string FormatTracker(int64_t step);
// Accepts surrounding whitespace (a hand-edited file ends in a newline). DataLoss
// quoting the contents when they are not a step number.
absl::StatusOr<int64_t> ParseTracker(absl::string_view contents);

}  // namespace rollout::controller
