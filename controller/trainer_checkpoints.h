// The trainers' side of checkpoints (DESIGN.md §6), shared by the PPO / GRPO and the
// SFT / DPO loops: resume at start and save when due, over CheckpointStore
// (checkpoint_store.h) in trainer.default_local_dir, with the workers writing and
// reading their role directories (`<role>.save_checkpoint` / `<role>.load_checkpoint`,
// workers/checkpoint_io.h) and the trainer's own state in trainer_state.json.
//
// Recipe keys, verl's: trainer.save_freq, trainer.default_local_dir,
// trainer.resume_mode (auto | disable | resume_path), trainer.resume_from_path,
// trainer.max_actor_ckpt_to_keep, trainer.max_critic_ckpt_to_keep,
// trainer.del_local_ckpt_after_load; actor.checkpoint.async_save (every role): Save
// starts the workers' writes and returns, and FinishSave — before the next update, the
// next save or the end — waits for them and commits the checkpoint, so a crash
// meanwhile leaves the previous checkpoint as the last complete one.
//
// Not thread-safe; the trainer's thread drives it. The worker groups must outlive it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/file_system.h"
#include "controller/checkpoint_store.h"
#include "controller/trainer_state.h"
#include "controller/worker_group.h"
#include "proto/recipe.pb.h"

namespace rollout::controller {

// A role whose workers keep state: its name ("actor", "critic") is its directory in a
// checkpoint and the prefix of its methods.
struct CheckpointedRole {
  std::string name;
  WorkerGroup* group = nullptr;
};

class TrainerCheckpoints {
 public:
  // InvalidArgument for a bad trainer.resume_mode. `fs` must outlive the object.
  static absl::StatusOr<std::unique_ptr<TrainerCheckpoints>> Create(
      const config::Recipe& recipe, std::vector<CheckpointedRole> roles,
      FileSystem* fs = DefaultFileSystem());

  // At the start of a run, once the workers' roles are initialised: decides what to
  // resume from (CheckpointStore::ResolveResume, its message logged), has every worker
  // of every role load its directory, reads trainer_state.json and then, with
  // trainer.del_local_ckpt_after_load, deletes the role directories (only after every
  // rank has loaded). nullopt: a fresh start. The resolver's errors (DataLoss for a
  // corrupt checkpoint, FailedPrecondition for one deleted after loading, ...);
  // FailedPrecondition when the checkpoint lacks a role's directory; the first
  // worker's error, naming the role directory. A recipe whose fingerprint differs from
  // the checkpoint's is logged as a warning.
  absl::StatusOr<std::optional<TrainerState>> Resume();

  // verl's rule: trainer.save_freq > 0 and `step` is a multiple of it or the last.
  bool SaveDue(int64_t step, int64_t total_steps) const;

  // Saves global_step_<state.global_step>: BeginSave, every role's workers write
  // <staging>/<role>, CommitSave with `state` as trainer_state.json (then retention).
  // With async_save the commit waits for FinishSave(). Errors name the step and role.
  absl::Status Save(const TrainerState& state);
  // Waits for the workers' asynchronous writes (`<role>.wait_checkpoint`) and commits
  // the pending checkpoint; OK when none is pending.
  absl::Status FinishSave();
  bool save_pending() const { return pending_.has_value(); }

 private:
  TrainerCheckpoints(const config::TrainerConfig& trainer, ResumeMode mode,
                     std::vector<CheckpointedRole> roles, FileSystem* fs);
  // Every worker of every role runs `<role>.<method>` on `<checkpoint_dir>/<role>`
  // (with meta async "1" when `async`).
  absl::Status CallRoles(const std::string& method, const std::string& checkpoint_dir, bool async = false);

  const config::TrainerConfig trainer_;
  const ResumeMode mode_;
  const std::vector<CheckpointedRole> roles_;
  FileSystem* const fs_;
  CheckpointStore store_;
  std::string fingerprint_;
  bool async_save_ = false;
  std::optional<TrainerState> pending_;  // saved asynchronously, not committed yet
};

}  // namespace rollout::controller
