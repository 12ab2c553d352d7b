#include "workers/memory_metrics.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"

#ifdef ROLLOUT_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace rollout::workers {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace

DeviceMemoryPeaks PeakDeviceMemory(c10::Device device) {
  DeviceMemoryPeaks peaks;
#ifdef ROLLOUT_WITH_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    // [0]: the aggregate over the allocator's pools.
    peaks.allocated = stats.allocated_bytes[0].peak;
    peaks.reserved = stats.reserved_bytes[0].peak;
  }
#endif
  return peaks;
}

void ResetPeakDeviceMemory(c10::Device device) {
#ifdef ROLLOUT_WITH_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
#endif
}

std::optional<int64_t> HostMemoryUsed(absl::string_view meminfo) {
  std::map<std::string, int64_t> kib;  // "MemTotal:   24576000 kB" -> {MemTotal, 24576000}
  for (absl::string_view line : absl::StrSplit(meminfo, '\n', absl::SkipWhitespace())) {
    const std::pair<absl::string_view, absl::string_view> field = absl::StrSplit(line, absl::MaxSplits(':', 1));
    absl::string_view value = absl::StripAsciiWhitespace(field.second);
    absl::ConsumeSuffix(&value, " kB");
    int64_t parsed = 0;
    if (absl::SimpleAtoi(value, &parsed)) kib[std::string(field.first)] = parsed;
  }
  for (const char* needed : {"MemTotal", "MemFree", "Buffers", "Cached"}) {
    if (kib.count(needed) == 0) return std::nullopt;
  }
  const int64_t cached = kib["Cached"] + (kib.count("SReclaimable") ? kib["SReclaimable"] : 0);
  int64_t used = kib["MemTotal"] - kib["MemFree"] - kib["Buffers"] - cached;
  // psutil's fallback where caches are counted oddly (some containers).
  if (used < 0) used = kib["MemTotal"] - kib["MemFree"];
  return used * 1024;
}

void AddMemoryMetrics(c10::Device device, std::map<std::string, double>* metrics) {
  if (device.is_cuda()) {
    const DeviceMemoryPeaks peaks = PeakDeviceMemory(device);
    (*metrics)["perf/max_memory_allocated_gb"] = static_cast<double>(peaks.allocated) / kGiB;
    (*metrics)["perf/max_memory_reserved_gb"] = static_cast<double>(peaks.reserved) / kGiB;
  }
  const absl::StatusOr<std::string> meminfo = ReadFile("/proc/meminfo");
  if (!meminfo.ok()) return;
  if (const std::optional<int64_t> used = HostMemoryUsed(*meminfo); used.has_value()) {
    (*metrics)["perf/cpu_memory_used_gb"] = static_cast<double>(*used) / kGiB;
  }
}

}  // namespace rollout::workers
