#include "common/crash_point.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/check.h"

namespace rollout {
namespace {

// Index into KnownCrashPoints() of the armed point; -1 when none is.
std::atomic<int> armed_index{-1};

int IndexOf(absl::string_view name) {
  const std::vector<std::string>& known = KnownCrashPoints();
  const auto it = std::find(known.begin(), known.end(), name);
  return it == known.end() ? -1 : static_cast<int>(it - known.begin());
}

}  // namespace

const std::vector<std::string>& KnownCrashPoints() {
  // The checkpoint protocol (controller/checkpoint_store.h): saving, replacing a
  // checkpoint of the same step, retention and del_local_ckpt_after_load.
  static const std::vector<std::string>* const points = new std::vector<std::string>{
      "ckpt.begin_save.after_cleanup",
      "ckpt.save.after_trainer_state",
      "ckpt.save.after_manifest",
      "ckpt.save.after_tracker_fallback",
      "ckpt.save.after_hide_replaced",
      "ckpt.save.after_rename",
      "ckpt.save.after_tracker",
      "ckpt.save.after_remove_replaced",
      "ckpt.retention.after_manifest_rewrite",
      "ckpt.retention.after_remove_role",
      "ckpt.retention.after_hide_step",
      "ckpt.retention.after_remove_step",
      "ckpt.delete_after_load.after_manifest_rewrite",
      "ckpt.delete_after_load.after_remove_role",
  };
  return *points;
}

absl::Status ArmCrashPoint(absl::string_view name) {
  const int index = IndexOf(name);
  if (index < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown crash point '", name, "'; known: ", absl::StrJoin(KnownCrashPoints(), ", ")));
  }
  armed_index.store(index);
  return absl::OkStatus();
}

void CrashPoint(absl::string_view name) {
  const int index = IndexOf(name);
  ROLLOUT_CHECK(index >= 0) << "crash point '" << name << "' is not in KnownCrashPoints()";
  if (index != armed_index.load()) return;
  const std::string line = absl::StrCat("rollout: crash point ", name, " reached\n");
  // write(2), not a stream: nothing buffered may be lost or flushed twice.
  ssize_t ignored = write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
  _exit(kCrashPointExitCode);
}

}  // namespace rollout
