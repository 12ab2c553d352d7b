// A worker's methods run with the worker's GPU current, whichever thread calls them
// (gRPC threads start on GPU 0; kernels launched on the current stream would run
// there). Needs two GPUs.
#include "workers/method_registry.h"

#include <c10/cuda/CUDAFunctions.h>
#include <gtest/gtest.h>

#include <thread>

namespace rollout::workers {
namespace {

TEST(MethodRegistryCuda, RunsMethodsOnTheWorkersDevice) {
  const int count = c10::cuda::device_count();
  if (count < 2) GTEST_SKIP() << "needs two GPUs, this host has " << count;
  const c10::Device last(c10::kCUDA, static_cast<c10::DeviceIndex>(count - 1));
  MethodRegistry registry(last);
  int seen = -1;
  ASSERT_TRUE(registry.Register("probe", [&](const Batch&) -> absl::StatusOr<Batch> {
    seen = c10::cuda::current_device();
    return Batch();
  }).ok());
  std::thread caller([&] {  // a fresh thread: its current device is 0
    EXPECT_EQ(c10::cuda::current_device(), 0);
    EXPECT_TRUE(registry.Invoke("probe", Batch()).ok());
    EXPECT_EQ(c10::cuda::current_device(), 0);  // restored after the call
  });
  caller.join();
  EXPECT_EQ(seen, count - 1);
}

}  // namespace
}  // namespace rollout::workers
