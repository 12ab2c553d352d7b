// The shared mini-batch loop: micro-batch shares, optimizer steps per mini-batch,
// non-finite gradients skipped, and gradient clipping as torch's clip_grad_norm_.
#include "workers/minibatch_loop.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

namespace rollout::workers {
namespace {

MiniBatchPlan Plan(int64_t mini, int64_t micro, int64_t epochs) {
  MiniBatchPlan plan;
  plan.mini_batch_rows = mini;
  plan.micro_batch_rows = micro;
  plan.epochs = epochs;
  return plan;
}

TEST(RunMiniBatches, VisitsEveryMicroBatchWithItsShareAndStepsOncePerMiniBatch) {
  at::Tensor weight = at::zeros({1}).set_requires_grad(true);
  AdamWOptions adamw;
  adamw.lr = 0.1;
  AdamW optimizer({&weight}, adamw);
  std::vector<std::tuple<int64_t, int64_t, double>> calls;
  const MiniBatchResult result =
      RunMiniBatches(10, Plan(5, 2, 2), {&weight}, optimizer, [&](int64_t start, int64_t rows, double share) {
        calls.emplace_back(start, rows, share);
        (weight * share).sum().backward();
        return absl::OkStatus();
      }).value();
  ASSERT_EQ(calls.size(), 12u);  // 2 epochs x 2 mini-batches x (2 + 2 + 1 rows)
  EXPECT_EQ(calls[0], std::make_tuple(int64_t{0}, int64_t{2}, 0.4));
  EXPECT_EQ(calls[2], std::make_tuple(int64_t{4}, int64_t{1}, 0.2));
  EXPECT_EQ(calls[3], std::make_tuple(int64_t{5}, int64_t{2}, 0.4));
  ASSERT_EQ(result.grad_norms.size(), 4u);
  EXPECT_NEAR(result.grad_norms[0], 1.0, 1e-6);  // the shares sum to one
  EXPECT_EQ(result.skipped_steps, 0);
  EXPECT_FALSE(weight.grad().defined());  // dropped after the loop
}

TEST(RunMiniBatches, SkipsAStepWithANonFiniteGradient) {
  at::Tensor weight = at::ones({1}).set_requires_grad(true);
  AdamW optimizer({&weight}, AdamWOptions());
  int calls = 0;
  const MiniBatchResult result =
      RunMiniBatches(2, Plan(1, 1, 1), {&weight}, optimizer, [&](int64_t, int64_t, double) {
        const double scale = calls++ == 0 ? std::numeric_limits<double>::infinity() : 1.0;
        (weight * scale).sum().backward();
        return absl::OkStatus();
      }).value();
  EXPECT_EQ(result.skipped_steps, 1);
  EXPECT_TRUE(std::isinf(result.grad_norms[0]));
  EXPECT_LT(weight.item<double>(), 1.0);  // the second, finite step was taken
}

TEST(RunMiniBatches, ErrorsStopTheLoop) {
  at::Tensor weight = at::ones({1}).set_requires_grad(true);
  AdamW optimizer({&weight}, AdamWOptions());
  const auto fail = [](int64_t, int64_t, double) { return absl::InvalidArgumentError("bad micro-batch"); };
  EXPECT_EQ(RunMiniBatches(4, Plan(2, 1, 1), {&weight}, optimizer, fail).status().message(), "bad micro-batch");
  EXPECT_THAT(RunMiniBatches(3, Plan(2, 1, 1), {&weight}, optimizer, fail).status().message(),
              ::testing::HasSubstr("3 rows are not a whole number of mini-batches of 2 rows"));
  EXPECT_THAT(CheckMiniBatchPlan(Plan(2, 0, 1), "critic").message(), ::testing::HasSubstr("critic: "));
}

TEST(ClipGradNorm, ScalesGradientsToTheBoundAndReportsTheNormBefore) {
  at::Tensor a = at::zeros({1}), b = at::zeros({1});
  a.mutable_grad() = at::full({1}, 3.0);
  b.mutable_grad() = at::full({1}, 4.0);
  EXPECT_NEAR(ClipGradNorm({&a, &b}, 1.0), 5.0, 1e-6);
  EXPECT_NEAR(a.grad().item<double>(), 0.6, 1e-6);
  EXPECT_NEAR(b.grad().item<double>(), 0.8, 1e-6);
  EXPECT_NEAR(ClipGradNorm({&a, &b}, 10.0), 1.0, 1e-5);  // under the bound: unchanged
  EXPECT_NEAR(a.grad().item<double>(), 0.6, 1e-6);
  b.mutable_grad() = at::full({1}, std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isinf(ClipGradNorm({&a, &b}, 1.0)));
  EXPECT_NEAR(a.grad().item<double>(), 0.6, 1e-6);  // left alone
}

}  // namespace
}  // namespace rollout::workers
