#include "workers/background_save.h"

#include <c10/core/DeviceGuard.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::workers {

BackgroundSave::~BackgroundSave() { Wait().IgnoreError(); }

absl::Status BackgroundSave::Start(RoleCheckpoint role, CheckpointParts parts, std::string dir) {
  if (pending()) {
    return absl::FailedPreconditionError(
        absl::StrCat("asynchronous save to ", dir, ": the previous one has not been waited for"));
  }
  thread_ = std::thread([this, role = std::move(role), parts, dir = std::move(dir)] {
    c10::OptionalDeviceGuard device_guard;
    if (role.device.is_cuda()) device_guard.reset_device(role.device);
    result_ = WithContext(SaveRoleCheckpoint(role, parts, dir), absl::StrCat("asynchronous save to ", dir));
  });
  return absl::OkStatus();
}

absl::Status BackgroundSave::Wait() {
  if (!pending()) return absl::OkStatus();
  thread_.join();
  return std::exchange(result_, absl::OkStatus());
}

}  // namespace rollout::workers
