// A compute device named as on command lines and in placements: "cpu", "cuda:N".
#pragma once

#include <c10/core/Device.h>

#include <string>

#include "absl/status/statusor.h"

namespace rollout {

// InvalidArgument for a malformed spec; FailedPrecondition when the device is not
// there (no CUDA in this LibTorch, or fewer GPUs than the index needs). On success the
// device is current for this thread's CUDA calls.
absl::StatusOr<c10::Device> OpenDevice(const std::string& spec);

}  // namespace rollout
