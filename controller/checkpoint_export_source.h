// Which checkpoint `rollout ckpt export PATH` reads, checked before anything reads
// it. PATH may name
//   R/global_step_N          a checkpoint,
//   R/global_step_N/actor    its actor directory, or
//   R                        a checkpoint root: the checkpoint the tracker
//                            (latest_checkpointed_iteration.txt) names.
// The checkpoint must be complete, hold an actor directory, and match its manifest
// byte for byte (controller/checkpoint_manifest.h). The exporting itself needs the
// model code and is workers/checkpoint_export.h's.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "common/file_system.h"

namespace rollout::controller {

struct ExportSource {
  std::string checkpoint_dir;  // R/global_step_N
  std::string actor_dir;       // R/global_step_N/actor
};

// NotFound when PATH does not exist; InvalidArgument when it is none of the above
// (or a root without a tracker); FailedPrecondition for a checkpoint without a
// manifest (an interrupted save), one deleted after load, or one without an actor;
// DataLoss naming the checkpoint and the first file that does not match the
// manifest ("checkpoint global_step_4: checksum mismatch for actor/model.safetensors").
absl::StatusOr<ExportSource> LocateExportSource(FileSystem& fs, const std::string& path);

}  // namespace rollout::controller
