#include "workers/method_registry.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>


namespace rollout::workers {
namespace {

using ::testing::HasSubstr;

TEST(MethodRegistry, InvokesByName) {
  MethodRegistry registry;
  ASSERT_TRUE(registry
                  .Register("double",
                            [](const Batch& in) -> absl::StatusOr<Batch> {
                              Batch out;
                              absl::Status s = out.AddTensor("x", in.Tensor("x").value() * 2);
                              if (!s.ok()) return s;
                              return out;
                            })
                  .ok());
  Batch input;
  ASSERT_TRUE(input.AddTensor("x", at::ones({3})).ok());
  absl::StatusOr<Batch> out = registry.Invoke("double", input);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(at::equal(out->Tensor("x").value(), at::full({3}, 2.0)));
}

TEST(MethodRegistry, DuplicateNameIsRefused) {
  MethodRegistry registry;
  auto identity = [](const Batch& in) -> absl::StatusOr<Batch> { return in; };
  ASSERT_TRUE(registry.Register("m", identity).ok());
  EXPECT_EQ(registry.Register("m", identity).code(), absl::StatusCode::kAlreadyExists);
}

TEST(MethodRegistry, UnknownMethodListsKnownOnes) {
  MethodRegistry registry;
  ASSERT_TRUE(registry.Register("a.one", [](const Batch& in) -> absl::StatusOr<Batch> {
    return in;
  }).ok());
  absl::StatusOr<Batch> out = registry.Invoke("a.two", Batch());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("it has: a.one"));
}

TEST(MethodRegistry, LibTorchExceptionBecomesInternalError) {
  MethodRegistry registry;
  ASSERT_TRUE(registry.Register("bad_matmul", [](const Batch&) -> absl::StatusOr<Batch> {
    at::matmul(at::ones({2, 3}), at::ones({4, 5}));  // throws c10::Error
    return Batch();
  }).ok());
  ASSERT_TRUE(registry.Register("throws", [](const Batch&) -> absl::StatusOr<Batch> {
    throw std::runtime_error("boom");
  }).ok());
  absl::StatusOr<Batch> torch_error = registry.Invoke("bad_matmul", Batch());
  EXPECT_EQ(torch_error.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(torch_error.status().message()),
              HasSubstr("method bad_matmul failed in LibTorch"));
  absl::StatusOr<Batch> plain = registry.Invoke("throws", Batch());
  EXPECT_EQ(std::string(plain.status().message()), "method throws failed: boom");
}

}  // namespace
}  // namespace rollout::workers
