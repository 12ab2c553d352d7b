// The shared mini-batch loop: micro-batch shares (by row count or token budget),
// optimizer steps per mini-batch, the check before each, non-finite gradients skipped,
// metric means, and gradient clipping as torch's clip_grad_norm_.
#include "workers/minibatch_loop.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace rollout::workers {
namespace {

MiniBatchPlan Plan(int64_t mini, int64_t micro, int64_t epochs) {
  MiniBatchPlan plan;
  plan.mini_batch_rows = mini;
  plan.micro_batch.rows = micro;
  plan.epochs = epochs;
  return plan;
}

MiniBatchPlan TokenBudgetPlan(int64_t mini, int64_t budget) {
  MiniBatchPlan plan = Plan(mini, /*micro=*/1, /*epochs=*/1);
  plan.micro_batch.max_tokens = budget;
  return plan;
}

TEST(RunMiniBatches, VisitsEveryMicroBatchWithItsShareAndStepsOncePerMiniBatch) {
  at::Tensor weight = at::zeros({1}).set_requires_grad(true);
  AdamWOptions adamw;
  adamw.lr = 0.1;
  AdamW optimizer({&weight}, adamw);
  std::vector<std::tuple<int64_t, int64_t, double>> calls;
  const MiniBatchResult result =
      RunMiniBatches(10, {}, Plan(5, 2, 2), {&weight}, optimizer, [&](int64_t start, int64_t rows, double share) {
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

// A bfloat16 parameter's micro-batch gradients add up in float32, as verl's FSDP does:
// the check after the micro-batches sees 1 + 1/512, which bfloat16 would round to 1.
TEST(RunMiniBatches, Bfloat16GradientsAccumulateInFloat32) {
  at::Tensor weight = at::zeros({1}, at::kBFloat16).set_requires_grad(true);
  AdamW optimizer({&weight}, AdamWOptions());
  at::Tensor seen;
  const auto result = RunMiniBatches(
      2, {}, Plan(2, 1, 1), {&weight}, optimizer,
      [&](int64_t start, int64_t, double) {
        (weight * (start == 0 ? 1.0 : 1.0 / 512)).sum().backward();
        return absl::OkStatus();
      },
      [&] {
        seen = weight.grad().clone();
        return absl::OkStatus();
      });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(at::equal(seen, at::full({1}, 1.0f + 1.0f / 512))) << seen;
}

// verl's split: rows that do not fill the last mini-batch form a smaller one, whose
// micro-batches keep their share of a full mini-batch.
TEST(RunMiniBatches, TheRowsLeftOverFormASmallerLastMiniBatch) {
  at::Tensor weight = at::zeros({1}).set_requires_grad(true);
  AdamW optimizer({&weight}, AdamWOptions());
  std::vector<std::tuple<int64_t, int64_t, double>> calls;
  const MiniBatchResult result =
      RunMiniBatches(7, {}, Plan(3, 2, 1), {&weight}, optimizer, [&](int64_t start, int64_t rows, double share) {
        calls.emplace_back(start, rows, share);
        (weight * share).sum().backward();
        return absl::OkStatus();
      }).value();
  ASSERT_EQ(calls.size(), 5u);  // (2 + 1) + (2 + 1) + 1 rows
  EXPECT_EQ(calls[4], std::make_tuple(int64_t{6}, int64_t{1}, 1.0 / 3));
  ASSERT_EQ(result.grad_norms.size(), 3u);
  EXPECT_NEAR(result.grad_norms[1], 1.0, 1e-6);
  EXPECT_NEAR(result.grad_norms[2], 1.0 / 3, 1e-6);  // a third of a full mini-batch's gradient
}

TEST(RunMiniBatches, SkipsAStepWithANonFiniteGradient) {
  at::Tensor weight = at::ones({1}).set_requires_grad(true);
  AdamW optimizer({&weight}, AdamWOptions());
  int calls = 0;
  const MiniBatchResult result =
      RunMiniBatches(2, {}, Plan(1, 1, 1), {&weight}, optimizer, [&](int64_t, int64_t, double) {
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
  EXPECT_EQ(RunMiniBatches(4, {}, Plan(2, 1, 1), {&weight}, optimizer, fail).status().message(), "bad micro-batch");
  EXPECT_EQ(RunMiniBatches(0, {}, Plan(2, 1, 1), {&weight}, optimizer, fail).status().message(),
            "no rows to train on (0)");
  EXPECT_THAT(CheckMiniBatchPlan(Plan(2, 0, 1), "critic").message(), ::testing::HasSubstr("critic: "));
  EXPECT_THAT(CheckMiniBatchPlan(TokenBudgetPlan(2, -1), "actor").message(),
              ::testing::HasSubstr("the micro-batch token budget (-1) >= 0"));
}

TEST(RunMiniBatches, TokenBudgetSharesAreRowFractionsOfTheMiniBatch) {
  at::Tensor weight = at::zeros({1}).set_requires_grad(true);
  AdamW optimizer({&weight}, AdamWOptions());
  const at::Tensor mask = at::tensor({1, 1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1}).view({4, 3});
  const MiniBatchPlan plan = TokenBudgetPlan(4, 3);
  const std::vector<int64_t> tokens = RowTokensFor(plan.micro_batch, mask);
  std::vector<std::tuple<int64_t, int64_t, double>> calls;
  const MiniBatchResult result =
      RunMiniBatches(4, tokens, plan, {&weight}, optimizer, [&](int64_t start, int64_t rows, double share) {
        calls.emplace_back(start, rows, share);
        (weight * share).sum().backward();
        return absl::OkStatus();
      }).value();
  EXPECT_THAT(calls, ::testing::ElementsAre(std::make_tuple(int64_t{0}, int64_t{1}, 0.25),
                                            std::make_tuple(int64_t{1}, int64_t{2}, 0.5),
                                            std::make_tuple(int64_t{3}, int64_t{1}, 0.25)));
  EXPECT_NEAR(result.grad_norms[0], 1.0, 1e-6);
}

TEST(RunMiniBatches, TheCheckRunsBeforeEachStepAndItsErrorStopsTheLoop) {
  at::Tensor weight = at::ones({1}).set_requires_grad(true);
  AdamW optimizer({&weight}, AdamWOptions());
  std::vector<std::string> events;
  const auto step = [&](int64_t start, int64_t, double share) {
    events.push_back(absl::StrCat("micro ", start));
    (weight * share).sum().backward();
    return absl::OkStatus();
  };
  const auto check = [&] {
    events.push_back("check");
    return events.size() < 4 ? absl::OkStatus() : absl::InvalidArgumentError("loss: 1 NaN");
  };
  EXPECT_EQ(RunMiniBatches(4, {}, Plan(2, 1, 1), {&weight}, optimizer, step, check).status().message(),
            "loss: 1 NaN");
  EXPECT_THAT(events, ::testing::ElementsAre("micro 0", "micro 1", "check", "micro 2", "micro 3", "check"));
  EXPECT_EQ(optimizer.states()[0].step.item<float>(), 1.0f);  // the second mini-batch never stepped
  EXPECT_FALSE(weight.grad().defined());
}

TEST(EpochRowOrder, IsASeededPermutationNewEachEpoch) {
  const std::vector<int64_t> first = EpochRowOrder(64, 7, 0);
  std::vector<int64_t> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> identity(64);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(sorted, identity);
  EXPECT_NE(first, identity);
  EXPECT_EQ(EpochRowOrder(64, 7, 0), first);
  EXPECT_NE(EpochRowOrder(64, 7, 1), first);
  EXPECT_NE(EpochRowOrder(64, 8, 0), first);
}

// Shuffled: before each epoch the caller is handed that epoch's order, and the
// micro-batches' token budgets are planned over the rows in that order.
TEST(RunMiniBatches, ShuffledEpochsReorderTheRowsAndPlanMicroBatchesInTheirOrder) {
  at::Tensor weight = at::zeros({1}).set_requires_grad(true);
  AdamW optimizer({&weight}, AdamWOptions());
  MiniBatchPlan plan = TokenBudgetPlan(4, 3);
  plan.epochs = 2;
  plan.shuffle = true;
  plan.shuffle_seed = 11;
  const std::vector<int64_t> tokens = {3, 1, 2, 1};  // rows 1 and 3 fit together, 0 and 2 do not
  std::vector<std::vector<int64_t>> orders;
  std::vector<std::pair<int64_t, int64_t>> calls;
  const auto step = [&](int64_t start, int64_t rows, double share) {
    calls.emplace_back(start, rows);
    (weight * share).sum().backward();
    return absl::OkStatus();
  };
  const auto reorder = [&](const std::vector<int64_t>& order) {
    orders.push_back(order);
    return absl::OkStatus();
  };
  const MiniBatchResult result = RunMiniBatches(4, tokens, plan, {&weight}, optimizer, step, nullptr, reorder).value();
  EXPECT_EQ(result.grad_norms.size(), 2u);  // one mini-batch an epoch
  ASSERT_EQ(orders.size(), 2u);
  EXPECT_EQ(orders[0], EpochRowOrder(4, 11, 0));
  EXPECT_EQ(orders[1], EpochRowOrder(4, 11, 1));
  // The micro-batches of each epoch: consecutive rows of its order within 3 tokens.
  std::vector<std::pair<int64_t, int64_t>> expected;
  for (const std::vector<int64_t>& order : orders) {
    std::vector<int64_t> epoch_tokens;
    for (int64_t row : order) epoch_tokens.push_back(tokens[static_cast<size_t>(row)]);
    const std::vector<RowRange> ranges = MicroBatchRanges(0, 4, plan.micro_batch, epoch_tokens).value();
    for (const RowRange& range : ranges) {
      expected.emplace_back(range.start, range.rows);
    }
  }
  EXPECT_EQ(calls, expected);

  EXPECT_THAT(RunMiniBatches(4, tokens, plan, {&weight}, optimizer, step).status().message(),
              ::testing::HasSubstr("a shuffled mini-batch loop needs a way to reorder its rows"));
  const auto refuse = [](const std::vector<int64_t>&) { return absl::InternalError("cannot reorder"); };
  EXPECT_EQ(RunMiniBatches(4, tokens, plan, {&weight}, optimizer, step, nullptr, refuse).status().message(),
            "cannot reorder");
  EXPECT_FALSE(weight.grad().defined());
}

TEST(ReorderRows, TakesRowsInTheGivenOrderAndLeavesUndefinedTensors) {
  const at::Tensor rows = at::arange(6).view({3, 2});
  EXPECT_TRUE(at::equal(ReorderRows(rows, {2, 0, 0}), at::tensor({4, 5, 0, 1, 0, 1}).view({3, 2})));
  EXPECT_FALSE(ReorderRows(at::Tensor(), {0}).defined());
}

TEST(MeanMetrics, DeviceTensorListsGiveTheMeansOfTheirValues) {
  TensorMetricLists lists;
  lists["a"] = {at::scalar_tensor(1.0), at::scalar_tensor(2.0, at::kFloat)};
  lists["b"] = {at::scalar_tensor(-4.0)};
  lists["empty"] = {};
  const std::map<std::string, double> means = MeanMetrics(lists);
  EXPECT_EQ(means, (std::map<std::string, double>{{"a", 1.5}, {"b", -4.0}, {"empty", 0.0}}));
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

// A bfloat16 gradient counts at its float32 value and is scaled in its own dtype; a
// parameter without a gradient is skipped.
TEST(ClipGradNorm, MixedDtypesAndParametersWithoutGradients) {
  at::Tensor a = at::zeros({2}, at::kBFloat16), b = at::zeros({1}), c = at::zeros({1});
  a.mutable_grad() = at::full({2}, 2.0, at::kBFloat16);  // norm sqrt(8)
  b.mutable_grad() = at::full({1}, 1.0);                 // total sqrt(9)
  EXPECT_NEAR(ClipGradNorm({&a, &b, &c}, 1.5), 3.0, 1e-6);
  EXPECT_EQ(a.grad().scalar_type(), at::kBFloat16);
  EXPECT_NEAR(a.grad()[1].item<double>(), 1.0, 1e-2);
  EXPECT_NEAR(b.grad().item<double>(), 0.5, 1e-6);
  EXPECT_FALSE(c.grad().defined());
}

}  // namespace
}  // namespace rollout::workers
