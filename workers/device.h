// The device a worker computes on, from the launcher's `--device` ("cpu", "cuda:N").
#pragma once

#include <c10/core/Device.h>

#include <string>

#include "absl/status/statusor.h"

namespace rollout::workers {

// InvalidArgument for a malformed spec; FailedPrecondition when the device is not
// there (no CUDA in this LibTorch, or fewer GPUs than the index needs). On success the
// device is current for this thread's CUDA calls.
absl::StatusOr<c10::Device> OpenDevice(const std::string& spec);

}  // namespace rollout::workers
