// Retention: PlanRetention() and CheckpointStore::ApplyRetention().
#include "controller/checkpoint_retention.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/crash_point.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "controller/checkpoint_layout.h"
#include "controller/checkpoint_store.h"

namespace rollout::controller {
namespace {

bool Holds(const CheckpointInfo& checkpoint, const std::string& role) {
  return std::find(checkpoint.roles.begin(), checkpoint.roles.end(), role) !=
         checkpoint.roles.end();
}

// step -> roles that fall outside their role's newest K complete checkpoints.
std::map<int64_t, std::set<std::string>> RolesBeyondLimit(
    const std::vector<CheckpointInfo>& checkpoints, const RetentionOptions& options,
    const std::set<int64_t>& protected_steps) {
  std::map<int64_t, std::set<std::string>> beyond;
  for (const auto& [role, keep] :
       {std::pair<std::string, int>{"actor", options.max_actor_ckpt_to_keep},
        {"critic", options.max_critic_ckpt_to_keep}}) {
    if (keep <= 0) continue;
    int newer_holders = 0;
    for (auto it = checkpoints.rbegin(); it != checkpoints.rend(); ++it) {
      if (it->state != CheckpointState::kComplete || !Holds(*it, role)) continue;
      if (++newer_holders > keep && protected_steps.count(it->step) == 0) {
        beyond[it->step].insert(role);
      }
    }
  }
  return beyond;
}

}  // namespace

RetentionPlan PlanRetention(const std::vector<CheckpointInfo>& checkpoints,
                            const RetentionOptions& options, std::optional<int64_t> tracker_step) {
  std::optional<int64_t> newest_complete;
  for (const CheckpointInfo& checkpoint : checkpoints) {
    if (checkpoint.state == CheckpointState::kComplete) newest_complete = checkpoint.step;
  }
  std::set<int64_t> protected_steps;
  if (newest_complete.has_value()) protected_steps.insert(*newest_complete);
  if (tracker_step.has_value()) protected_steps.insert(*tracker_step);
  const std::map<int64_t, std::set<std::string>> beyond =
      newest_complete.has_value() ? RolesBeyondLimit(checkpoints, options, protected_steps)
                                  : std::map<int64_t, std::set<std::string>>();
  RetentionPlan plan;
  for (const CheckpointInfo& checkpoint : checkpoints) {
    const bool loadable_or_deleted = checkpoint.state == CheckpointState::kComplete ||
                                     checkpoint.state == CheckpointState::kDeletedAfterLoad;
    if (!loadable_or_deleted) continue;
    const bool superseded = checkpoint.state == CheckpointState::kDeletedAfterLoad &&
                            newest_complete.has_value() && checkpoint.step < *newest_complete &&
                            protected_steps.count(checkpoint.step) == 0;
    std::set<std::string> roles(checkpoint.unfinished_removals.begin(),
                                checkpoint.unfinished_removals.end());
    const auto found = beyond.find(checkpoint.step);
    const bool prune = found != beyond.end();
    if (prune) roles.insert(found->second.begin(), found->second.end());
    const bool no_role_left =
        prune && std::all_of(checkpoint.roles.begin(), checkpoint.roles.end(),
                             [&](const std::string& role) { return roles.count(role) > 0; });
    if (superseded || no_role_left) {
      plan.remove_steps.push_back(checkpoint.step);
    } else if (!roles.empty()) {
      plan.remove_roles.push_back({checkpoint.step, {roles.begin(), roles.end()}});
    }
  }
  return plan;
}

absl::Status RemoveRoleDirectories(FileSystem& fs, const std::string& dir,
                                   const Manifest& rewritten, const std::vector<std::string>& roles,
                                   absl::string_view point_after_manifest,
                                   absl::string_view point_after_remove) {
  RETURN_IF_ERROR(
      ReplaceFileAtomically(fs, JoinPath(dir, kManifestFile), ManifestToJson(rewritten)));
  CrashPoint(point_after_manifest);
  for (const std::string& role : roles) {
    RETURN_IF_ERROR(fs.RemoveTree(JoinPath(dir, role)));
    CrashPoint(point_after_remove);
  }
  return fs.SyncDirectory(dir);
}

absl::Status CheckpointStore::RemoveStepDirectory(int64_t step) {
  // Hidden first (one atomic rename), so that no half-deleted global_step_N is seen.
  RETURN_IF_ERROR(fs_->RemoveTree(DeletingDir(step)));
  RETURN_IF_ERROR(fs_->Rename(StepDir(step), DeletingDir(step)));
  RETURN_IF_ERROR(fs_->SyncDirectory(root_));
  CrashPoint("ckpt.retention.after_hide_step");
  RETURN_IF_ERROR(fs_->RemoveTree(DeletingDir(step)));
  CrashPoint("ckpt.retention.after_remove_step");
  return absl::OkStatus();
}

absl::Status CheckpointStore::ApplyRetention() {
  const std::string scan_context = absl::StrCat("retention could not scan ", root_);
  ASSIGN_OR_RETURN(FileInfo root, WithContext(fs_->Stat(root_), scan_context));
  if (!root.is_directory) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<CheckpointInfo> checkpoints,
                   WithContext(ListCheckpoints(*fs_, root_, VerifyLevel::kSizes), scan_context));
  ASSIGN_OR_RETURN(std::optional<int64_t> tracker,
                   WithContext(ReadTracker(*fs_, root_), scan_context));
  const RetentionPlan plan = PlanRetention(checkpoints, retention_, tracker);
  for (const RetentionPlan::RoleRemoval& removal : plan.remove_roles) {
    const std::string dir = StepDir(removal.step);
    const std::string context =
        absl::StrCat("retention could not remove ", absl::StrJoin(removal.roles, ", "), " from ",
                     StepDirName(removal.step));
    ASSIGN_OR_RETURN(Manifest manifest, WithContext(ReadManifest(*fs_, dir), context));
    RETURN_IF_ERROR(
        WithContext(RemoveRoleDirectories(*fs_, dir, manifest.WithoutRoles(removal.roles),
                                          removal.roles, "ckpt.retention.after_manifest_rewrite",
                                          "ckpt.retention.after_remove_role"),
                    context));
  }
  for (int64_t step : plan.remove_steps) {
    RETURN_IF_ERROR(WithContext(RemoveStepDirectory(step),
                                absl::StrCat("retention could not remove ", StepDirName(step))));
  }
  return absl::OkStatus();
}

}  // namespace rollout::controller
