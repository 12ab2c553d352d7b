// Where a run resumes from (trainer.resume_mode, trainer.resume_from_path).
// CheckpointStore::ResolveResume() decides; these are its types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::controller {

// verl's modes: auto (the newest complete checkpoint in trainer.default_local_dir,
// or a fresh start when there is none), disable (always fresh), resume_path
// (exactly trainer.resume_from_path).
enum class ResumeMode { kAuto, kDisable, kResumePath };

// "auto" | "disable" | "resume_path"; InvalidArgument naming the key otherwise.
absl::StatusOr<ResumeMode> ParseResumeMode(absl::string_view text);

struct ResumeDecision {
  // The checkpoint to load; nullopt: start fresh.
  std::optional<int64_t> step;
  std::string path;                // the global_step_N directory, verified
  std::vector<std::string> roles;  // its role directories
  // One line for the log saying what was decided and why, e.g. "no checkpoint in
  // R, starting fresh" or "resuming from R/global_step_40 (the tracker named
  // global_step_30, an interrupted save; repaired)".
  std::string message;
};

}  // namespace rollout::controller
