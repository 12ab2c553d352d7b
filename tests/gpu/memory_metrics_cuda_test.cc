// verl's memory metrics of an update (workers/memory_metrics.h) on a CUDA device: the
// caching allocator's peaks, and the metrics a GPU worker reports.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "workers/memory_metrics.h"

namespace rollout::workers {
namespace {

TEST(MemoryMetricsCuda, PeaksFollowTheCachingAllocator) {
  const c10::Device device(c10::kCUDA, 0);
  ResetPeakDeviceMemory(device);
  constexpr int64_t kBytes = int64_t{256} << 20;
  {
    const at::Tensor block = at::empty({kBytes}, at::TensorOptions().dtype(at::kByte).device(device));
    const DeviceMemoryPeaks peaks = PeakDeviceMemory(device);
    EXPECT_GE(peaks.allocated, kBytes);
    EXPECT_GE(peaks.reserved, peaks.allocated);
  }
  std::map<std::string, double> metrics;
  AddMemoryMetrics(device, &metrics);
  EXPECT_GE(metrics["perf/max_memory_allocated_gb"], 0.25);  // the block is freed; its peak stays
  EXPECT_GE(metrics["perf/max_memory_reserved_gb"], metrics["perf/max_memory_allocated_gb"]);
  EXPECT_GT(metrics["perf/cpu_memory_used_gb"], 0.0);
}

}  // namespace
}  // namespace rollout::workers
