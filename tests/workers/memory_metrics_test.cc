// verl's memory metrics of an update (workers/memory_metrics.h) on the CPU: psutil's
// "used" from /proc/meminfo text, and the metrics a CPU worker reports.
#include "workers/memory_metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "common/file_util.h"

namespace rollout::workers {
namespace {

// psutil 5.9's virtual_memory().used for this text: total - free - buffers - (cached +
// sreclaimable) = 24576000 - 10240000 - 512000 - (4096000 + 1024000) kB.
TEST(MemoryMetrics, HostMemoryUsedIsPsutilsUsed) {
  const std::string meminfo =
      "MemTotal:       24576000 kB\n"
      "MemFree:        10240000 kB\n"
      "MemAvailable:   15000000 kB\n"
      "Buffers:          512000 kB\n"
      "Cached:          4096000 kB\n"
      "SwapCached:            0 kB\n"
      "SReclaimable:    1024000 kB\n"
      "HugePages_Total:       0\n";
  EXPECT_EQ(HostMemoryUsed(meminfo), int64_t{8704000} * 1024);
  // Without SReclaimable (older kernels) the caches are Cached alone.
  EXPECT_EQ(HostMemoryUsed("MemTotal: 100 kB\nMemFree: 40 kB\nBuffers: 10 kB\nCached: 20 kB\n"), int64_t{30} * 1024);
}

TEST(MemoryMetrics, CachesLargerThanTheRestFallBackToTotalMinusFree) {
  EXPECT_EQ(HostMemoryUsed("MemTotal: 100 kB\nMemFree: 40 kB\nBuffers: 10 kB\nCached: 70 kB\n"), int64_t{60} * 1024);
}

TEST(MemoryMetrics, AMissingOrMalformedFieldGivesNothing) {
  EXPECT_EQ(HostMemoryUsed("MemTotal: 100 kB\nMemFree: 40 kB\nBuffers: 10 kB\n"), std::nullopt);
  EXPECT_EQ(HostMemoryUsed("MemTotal: lots\nMemFree: 40 kB\nBuffers: 10 kB\nCached: 20 kB\n"), std::nullopt);
  EXPECT_EQ(HostMemoryUsed(""), std::nullopt);
}

TEST(MemoryMetrics, ACpuWorkerReportsTheHostsMemoryInUseAndNoDeviceMemory) {
  std::map<std::string, double> metrics = {{"actor/lr", 1e-6}};
  AddMemoryMetrics(c10::Device(c10::kCPU), &metrics);
  EXPECT_EQ(metrics.count("perf/max_memory_allocated_gb"), 0u);
  EXPECT_EQ(metrics.count("perf/max_memory_reserved_gb"), 0u);
  ASSERT_EQ(metrics.count("perf/cpu_memory_used_gb"), 1u);
  const absl::StatusOr<std::string> meminfo = ReadFile("/proc/meminfo");
  ASSERT_TRUE(meminfo.ok()) << meminfo.status();
  // MemTotal (the first line), as HostMemoryUsed reads it with nothing free or cached.
  const std::string total_line = meminfo->substr(0, meminfo->find('\n'));
  const double total_gb =
      static_cast<double>(HostMemoryUsed(total_line + "\nMemFree: 0 kB\nBuffers: 0 kB\nCached: 0 kB\n").value_or(0)) /
      (1 << 30);
  EXPECT_GT(metrics["perf/cpu_memory_used_gb"], 0.0);
  EXPECT_LE(metrics["perf/cpu_memory_used_gb"], total_gb);
  EXPECT_EQ(metrics["actor/lr"], 1e-6);
  EXPECT_EQ(PeakDeviceMemory(c10::Device(c10::kCPU)).allocated, 0);
}

}  // namespace
}  // namespace rollout::workers
