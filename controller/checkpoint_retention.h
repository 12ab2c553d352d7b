// Retention of checkpoints (trainer.max_actor_ckpt_to_keep,
// trainer.max_critic_ckpt_to_keep), planned from what is on disk so that it holds
// across restarts. CheckpointStore::ApplyRetention() carries the plan out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/file_system.h"
#include "controller/checkpoint_catalog.h"
#include "controller/checkpoint_manifest.h"

namespace rollout::controller {

struct RetentionOptions {
  // As in verl: a role's directory is kept in the newest K complete checkpoints
  // that hold one and removed from older ones; 0 keeps every one.
  int max_actor_ckpt_to_keep = 0;
  int max_critic_ckpt_to_keep = 0;
};

struct RetentionPlan {
  struct RoleRemoval {
    int64_t step = 0;
    std::vector<std::string> roles;  // sorted
  };
  // Role directories to remove (the manifest is rewritten without them first).
  // Includes finishing removals that a crash interrupted.
  std::vector<RoleRemoval> remove_roles;
  // Whole step directories to remove: checkpoints left with no role, and
  // deleted-after-load ones once a newer complete checkpoint exists.
  std::vector<int64_t> remove_steps;
};

// What retention removes, given ListCheckpoints() (at VerifyLevel::kSizes) and the
// tracker's step. It never touches the newest complete checkpoint nor the one the
// tracker names, so at least one complete checkpoint always stays; it never
// touches partial or corrupt directories (they are evidence, or not ours).
RetentionPlan PlanRetention(const std::vector<CheckpointInfo>& checkpoints,
                            const RetentionOptions& options, std::optional<int64_t> tracker_step);

// Rewrites dir/MANIFEST.json as `rewritten` atomically, crashes at
// `point_after_manifest` when armed, then removes each of `roles` from `dir`
// (crash point `point_after_remove` after each) and fsyncs `dir`. Retention and
// del_local_ckpt_after_load both remove roles this way: a crash leaves a manifest
// that already disowns the directories, so they are leftovers, not damage.
absl::Status RemoveRoleDirectories(FileSystem& fs, const std::string& dir,
                                   const Manifest& rewritten, const std::vector<std::string>& roles,
                                   absl::string_view point_after_manifest,
                                   absl::string_view point_after_remove);

}  // namespace rollout::controller
