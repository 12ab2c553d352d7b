#include "common/device.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rollout {
namespace {

using ::testing::HasSubstr;

TEST(OpenDevice, CpuAlwaysOpens) {
  absl::StatusOr<c10::Device> device = OpenDevice("cpu");
  ASSERT_TRUE(device.ok());
  EXPECT_TRUE(device->is_cpu());
}

TEST(OpenDevice, MalformedSpecIsInvalidArgument) {
  for (const char* spec : {"gpu", "cuda", "cuda:", "cuda:x", "cuda:-1"}) {
    EXPECT_EQ(OpenDevice(spec).status().code(), absl::StatusCode::kInvalidArgument) << spec;
  }
}

TEST(OpenDevice, MissingGpuIsFailedPrecondition) {
  absl::StatusOr<c10::Device> device = OpenDevice("cuda:99");
  EXPECT_EQ(device.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(device.status().message()), HasSubstr("device cuda:99 requested"));
}

}  // namespace
}  // namespace rollout
