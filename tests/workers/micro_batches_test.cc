// Micro-batches: fixed row counts, runs of rows under a token budget, and each row's
// token count from the attention mask.
#include "workers/micro_batches.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace rollout::workers {
namespace {

std::vector<std::pair<int64_t, int64_t>> Ranges(const std::vector<RowRange>& ranges) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (const RowRange& range : ranges) pairs.emplace_back(range.start, range.rows);
  return pairs;
}

TEST(MicroBatchRanges, FixedRowCountsEndWithTheRemainder) {
  EXPECT_THAT(Ranges(MicroBatchRanges(5, 5, MicroBatchSize(2), {}).value()),
              ::testing::ElementsAre(std::make_pair(5, 2), std::make_pair(7, 2), std::make_pair(9, 1)));
}

TEST(MicroBatchRanges, TokenBudgetTakesTheLongestRunsOfRowsThatFit) {
  const std::vector<int64_t> tokens = {4, 3, 3, 10, 1, 9, 2, 2};
  struct Case {
    int64_t start, rows, budget;
    std::vector<std::pair<int64_t, int64_t>> expected;
  };
  const std::vector<Case> cases = {
      {0, 8, 10, {{0, 3}, {3, 1}, {4, 2}, {6, 2}}},  // a row of exactly the budget runs alone
      {0, 8, 100, {{0, 8}}},
      {4, 4, 12, {{4, 3}, {7, 1}}},  // rows counted from the batch's row 0
      {0, 3, 4, {{0, 1}, {1, 1}, {2, 1}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "start " << c.start << ", budget " << c.budget);
    EXPECT_EQ(Ranges(MicroBatchRanges(c.start, c.rows, MicroBatchSize(1, c.budget), tokens).value()), c.expected);
  }
}

TEST(MicroBatchRanges, ARowOverTheBudgetOrMissingCountsAreErrors) {
  EXPECT_EQ(MicroBatchRanges(0, 3, MicroBatchSize(1, 5), std::vector<int64_t>{5, 6, 1}).status().message(),
            "row 1 holds 6 tokens, more than the micro-batch budget of 5");
  EXPECT_EQ(MicroBatchRanges(0, 3, MicroBatchSize(1, 5), std::vector<int64_t>{1, 1}).status().message(),
            "token counts for 2 rows; the micro-batches need 3");
}

TEST(RowTokensFor, CountsEachRowsMaskOnlyWithABudget) {
  const at::Tensor mask = at::tensor({1, 1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 0}).view({4, 3});
  EXPECT_THAT(RowTokensFor(MicroBatchSize(1, 3), mask), ::testing::ElementsAre(3, 1, 2, 0));
  EXPECT_TRUE(RowTokensFor(MicroBatchSize(4), mask).empty());
}

}  // namespace
}  // namespace rollout::workers
