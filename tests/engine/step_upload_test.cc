#include "engine/step_upload.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace rollout::engine {
namespace {

template <typename T>
std::vector<T> Values(const at::Tensor& t) {
  const at::Tensor host = t.to(at::kCPU).contiguous();
  return std::vector<T>(host.data_ptr<T>(), host.data_ptr<T>() + host.numel());
}

TEST(StepUpload, SendsEachArrayWithItsValuesAndDtype) {
  const std::vector<int64_t> longs = {1, -2, int64_t{1} << 40};
  const std::vector<int32_t> ints = {7, 8, 9};  // 12 bytes: the next array is realigned
  const std::vector<float> floats = {0.5f, -1.25f};
  const std::vector<int64_t> more_longs = {42};
  StepUpload upload;
  EXPECT_EQ(upload.Add(longs), 0u);
  EXPECT_EQ(upload.Add(ints), 1u);
  EXPECT_EQ(upload.Add(floats), 2u);
  EXPECT_EQ(upload.Add(more_longs), 3u);
  const std::vector<at::Tensor> sent = upload.Send(c10::Device(c10::kCPU));
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(sent[0].scalar_type(), at::kLong);
  EXPECT_EQ(sent[1].scalar_type(), at::kInt);
  EXPECT_EQ(sent[2].scalar_type(), at::kFloat);
  EXPECT_EQ(Values<int64_t>(sent[0]), longs);
  EXPECT_EQ(Values<int32_t>(sent[1]), ints);
  EXPECT_EQ(Values<float>(sent[2]), floats);
  EXPECT_EQ(Values<int64_t>(sent[3]), more_longs);
  for (const at::Tensor& t : sent) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 8, 0u);
  }
}

TEST(StepUpload, ArraysAreCopiedAtSendNotAtAdd) {
  std::vector<int32_t> ints = {1, 2};
  StepUpload upload;
  upload.Add(ints);
  ints[1] = 5;
  const std::vector<at::Tensor> sent = upload.Send(c10::Device(c10::kCPU));
  ints[0] = 9;  // after Send: the sent copy keeps what it had
  EXPECT_EQ(Values<int32_t>(sent[0]), (std::vector<int32_t>{1, 5}));
}

TEST(StepUpload, EmptyArraysGiveEmptyTensors) {
  const std::vector<float> none;
  const std::vector<int64_t> one = {3};
  StepUpload upload;
  upload.Add(none);
  upload.Add(one);
  upload.Add(none);
  const std::vector<at::Tensor> sent = upload.Send(c10::Device(c10::kCPU));
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[0].numel(), 0);
  EXPECT_EQ(sent[0].scalar_type(), at::kFloat);
  EXPECT_EQ(Values<int64_t>(sent[1]), one);
  EXPECT_EQ(sent[2].numel(), 0);
  EXPECT_TRUE(StepUpload().Send(c10::Device(c10::kCPU)).empty());
}

}  // namespace
}  // namespace rollout::engine
