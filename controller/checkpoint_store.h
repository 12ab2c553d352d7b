// CheckpointStore: the crash-safe checkpoint protocol over a root directory R
// (trainer.default_local_dir); layout in controller/checkpoint_layout.h.
//
// Saving step N:
//   1. BeginSave(N) returns a staging directory R/.global_step_N.partial (any
//      scratch directory of a crashed earlier run is removed first).
//   2. The workers write their role directories into it (actor/, critic/) and
//      fsync every file they write.
//   3. CommitSave(N, state) writes trainer_state.json, checksums every file,
//      fsyncs the directories, writes MANIFEST.json LAST, renames the staging
//      directory to R/global_step_N, fsyncs R, replaces the tracker atomically,
//      then applies retention.
// A crash anywhere leaves the previous complete checkpoint loadable and the tracker
// naming a directory that exists with a manifest; a global_step_N directory without
// a manifest is never loaded.
//
// Saving a step that already exists (a run resumed from an older checkpoint) swaps
// the new directory in with one atomic renameat2(RENAME_EXCHANGE). Where the
// filesystem cannot (FileSystem::ExchangePaths is Unimplemented, e.g. NFS), the
// tracker is first pointed at the newest older complete checkpoint, then the old
// directory is moved aside and the new one renamed in; with no older complete
// checkpoint to point at, CommitSave refuses (FailedPrecondition) and changes
// nothing.
//
// Every durable step is followed by a CrashPoint() (common/crash_point.h,
// "ckpt.save.*", "ckpt.retention.*", "ckpt.delete_after_load.*").
//
// One store per root; not thread-safe (an asynchronous save runs its BeginSave ..
// CommitSave on one thread at a time). The FileSystem must outlive the store.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/file_system.h"
#include "controller/checkpoint_catalog.h"
#include "controller/checkpoint_resume.h"
#include "controller/checkpoint_retention.h"

namespace rollout::controller {

class CheckpointStore {
 public:
  CheckpointStore(FileSystem* fs, std::string root, RetentionOptions retention = {});

  const std::string& root() const { return root_; }

  // Creates R if needed, removes scratch directories left by a crashed run, and
  // returns a new empty staging directory for step `step` (>= 0).
  absl::StatusOr<std::string> BeginSave(int64_t step);

  // Makes the staging directory of BeginSave(step) the checkpoint R/global_step_N
  // (see above), with `trainer_state_json` as its trainer_state.json.
  // FailedPrecondition when there is no staging directory. When the checkpoint is
  // committed but retention fails, the error says so ("global_step_40 saved, but
  // retention could not remove global_step_30: ...").
  absl::Status CommitSave(int64_t step, absl::string_view trainer_state_json);

  // Removes old role directories and checkpoints as RetentionOptions and
  // PlanRetention() say. Run by CommitSave; also callable on its own (a restart
  // with a smaller max_*_ckpt_to_keep). Finishes removals a crash interrupted.
  absl::Status ApplyRetention();

  // trainer.del_local_ckpt_after_load, called once every rank has loaded `step`:
  // the manifest is rewritten as deleted-after-load (keeping trainer_state.json),
  // then the role directories are removed. The tracker keeps naming a directory
  // that exists, and a later ResolveResume(kAuto) with no newer checkpoint fails
  // with FailedPrecondition instead of starting from scratch. Retention removes the
  // directory once a newer complete checkpoint exists. NotFound when the
  // checkpoint has no manifest. Idempotent.
  absl::Status DeleteAfterLoad(int64_t step);

  // The checkpoint to load, checked byte for byte (sizes, then CRC32C):
  //  * kDisable: a fresh start.
  //  * kAuto: the newest checkpoint with a manifest; a fresh start ("no checkpoint
  //    in R, starting fresh") when R holds none. A tracker lagging behind a newer
  //    complete checkpoint (a crash before the tracker update) is repaired; a
  //    tracker naming a missing directory, a newest checkpoint that is corrupt, or
  //    global_step_N directories none of which has a manifest is DataLoss; a newest
  //    checkpoint deleted after loading is FailedPrecondition.
  //  * kResumePath: exactly `resume_from_path` (a global_step_N directory,
  //    anywhere): NotFound when missing, DataLoss naming the file when partial or
  //    corrupt.
  // Errors name the checkpoint ("checkpoint global_step_40: checksum mismatch for
  // actor/model.safetensors").
  absl::StatusOr<ResumeDecision> ResolveResume(ResumeMode mode,
                                               const std::string& resume_from_path);

 private:
  std::string StepDir(int64_t step) const;
  std::string StagingDir(int64_t step) const;
  std::string DeletingDir(int64_t step) const;
  absl::Status WriteStagingManifest(const std::string& staging);
  absl::Status MoveIntoPlace(int64_t step);
  absl::Status MoveAsideWithoutExchange(int64_t step);
  absl::Status RemoveStepDirectory(int64_t step);
  absl::StatusOr<ResumeDecision> ResolveAuto();

  FileSystem* fs_;
  std::string root_;
  RetentionOptions retention_;
};

}  // namespace rollout::controller
