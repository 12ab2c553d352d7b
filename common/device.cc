#include "common/device.h"

#include <torch/cuda.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"

namespace rollout {

absl::StatusOr<c10::Device> OpenDevice(const std::string& spec) {
  if (spec == "cpu") return c10::Device(c10::kCPU);
  int index = -1;
  if (!absl::StartsWith(spec, "cuda:") || !absl::SimpleAtoi(spec.substr(5), &index) ||
      index < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("device '", spec, "' is not 'cpu' or 'cuda:<index>'"));
  }
  if (!torch::cuda::is_available()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "device ", spec, " requested but this build of LibTorch sees no CUDA device"));
  }
  const int64_t count = static_cast<int64_t>(torch::cuda::device_count());
  if (index >= count) {
    return absl::FailedPreconditionError(
        absl::StrCat("device ", spec, " requested but this host has ", count, " GPU(s)"));
  }
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
}

}  // namespace rollout
