#include "workers/method_registry.h"

#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>

#include <exception>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace rollout::workers {

absl::Status MethodRegistry::Register(const std::string& name, WorkerMethod method) {
  std::lock_guard<std::mutex> lock(methods_mutex_);
  if (!methods_.emplace(name, std::move(method)).second) {
    return absl::AlreadyExistsError(absl::StrCat("worker method '", name, "' registered twice"));
  }
  return absl::OkStatus();
}

std::vector<std::string> MethodRegistry::Names() const {
  std::lock_guard<std::mutex> lock(methods_mutex_);
  std::vector<std::string> names;
  for (const auto& entry : methods_) names.push_back(entry.first);
  return names;
}

absl::StatusOr<Batch> MethodRegistry::Invoke(const std::string& name, const Batch& input) {
  WorkerMethod method;
  {
    std::lock_guard<std::mutex> lock(methods_mutex_);
    auto it = methods_.find(name);
    if (it != methods_.end()) method = it->second;
  }
  if (!method) {
    return absl::NotFoundError(absl::StrCat("this worker has no method '", name,
                                            "'; it has: ", absl::StrJoin(Names(), ", ")));
  }
  std::lock_guard<std::mutex> lock(invoke_mutex_);
  try {
    c10::OptionalDeviceGuard device_guard;
    if (device_.is_cuda()) device_guard.reset_device(device_);
    return method(input);
  } catch (const c10::Error& error) {
    return absl::InternalError(
        absl::StrCat("method ", name, " failed in LibTorch: ", error.what_without_backtrace()));
  } catch (const std::exception& error) {
    return absl::InternalError(absl::StrCat("method ", name, " failed: ", error.what()));
  }
}

}  // namespace rollout::workers
