// A training role's memory, as verl's update_actor reports it in its metrics:
//   perf/max_memory_allocated_gb  the most memory the CUDA caching allocator has handed
//                                 out on the role's device since the worker started
//                                 (torch.cuda.max_memory_allocated), in GiB; CUDA only
//   perf/max_memory_reserved_gb   the most it has held from the driver
//                                 (max_memory_reserved), in GiB; CUDA only
//   perf/cpu_memory_used_gb       the host's memory in use, as psutil's
//                                 virtual_memory().used that verl logs: MemTotal -
//                                 MemFree - Buffers - Cached - SReclaimable of
//                                 /proc/meminfo, in GiB
// These vary from run to run, as timings do.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace rollout::workers {

// The caching allocator's peaks on a CUDA `device`, in bytes, since the worker started
// or the last ResetPeakDeviceMemory; zeros off CUDA.
struct DeviceMemoryPeaks {
  int64_t allocated = 0;
  int64_t reserved = 0;
};
DeviceMemoryPeaks PeakDeviceMemory(c10::Device device);
void ResetPeakDeviceMemory(c10::Device device);

// psutil's "used" from the text of /proc/meminfo, in bytes; nullopt when a field it
// needs is missing or malformed.
std::optional<int64_t> HostMemoryUsed(absl::string_view meminfo);

// Adds the metrics above to `metrics`: the device's on CUDA, the host's wherever
// /proc/meminfo reads.
void AddMemoryMetrics(c10::Device device, std::map<std::string, double>* metrics);

}  // namespace rollout::workers
