// PagedKvCache's host-side step analysis: which trailing rows of a step start their
// sequences (and so attend over their own keys and values), and the offsets they use.
#include "engine/paged_kv_cache.h"

#include <gtest/gtest.h>

#include <vector>

namespace rollout::engine {
namespace {

// A step's host layout: row r has tokens[r] tokens ending at position context[r] - 1.
StepAttention Layout(const std::vector<int64_t>& tokens, const std::vector<int64_t>& context) {
  StepAttention step;
  step.row_token_begin = {0};
  for (int64_t count : tokens) step.row_token_begin.push_back(step.row_token_begin.back() + count);
  step.row_context = context;
  return step;
}

void ExpectFresh(const StepAttention& step, int64_t first_token,
                 const std::vector<int32_t>& offsets) {
  const PagedKvCache::FreshRows fresh = PagedKvCache::TrailingFreshRows(step);
  EXPECT_EQ(fresh.offsets, offsets);
  if (!offsets.empty()) {
    EXPECT_EQ(fresh.first_token, first_token);
  }
}

TEST(PagedKvCacheFreshRows, AStepOfPromptsIsFreshFromItsFirstToken) {
  ExpectFresh(Layout({5, 1, 130}, {5, 1, 130}), 0, {0, 5, 6, 136});
}

TEST(PagedKvCacheFreshRows, PromptsAfterRunningSequencesAreFreshFromTheirFirstToken) {
  // Two decode tokens and a later chunk of a long prompt, then two new prompts.
  ExpectFresh(Layout({1, 1, 16, 7, 3}, {40, 9, 32, 7, 3}), 18, {0, 7, 10});
}

TEST(PagedKvCacheFreshRows, RowsWithoutTokensArePassedOver) {
  ExpectFresh(Layout({0, 3, 0, 2, 0}, {40, 3, 0, 2, 12}), 0, {0, 3, 5});
  ExpectFresh(Layout({1, 0, 4}, {9, 30, 4}), 1, {0, 4});
}

TEST(PagedKvCacheFreshRows, OnlyTheTrailingRunCounts) {
  // A prompt, then a decode token: the prompt is not trailing.
  ExpectFresh(Layout({5, 1}, {5, 9}), 0, {});
  // A prompt, a decode token, a prompt: only the last.
  ExpectFresh(Layout({5, 1, 3}, {5, 9, 3}), 6, {0, 3});
}

TEST(PagedKvCacheFreshRows, RowsWithCachedContextAreNotFresh) {
  // A later prefill chunk, a prompt whose prefix was cached.
  ExpectFresh(Layout({16, 8}, {16, 24}), 0, {});
  ExpectFresh(Layout({7}, {23}), 0, {});
}

TEST(PagedKvCacheFreshRows, StepsWithoutTokensOrHostLayoutHaveNone) {
  ExpectFresh(Layout({0, 0}, {3, 0}), 0, {});
  ExpectFresh(StepAttention(), 0, {});  // a CUDA-graph step carries no host layout
  StepAttention mismatched = Layout({2, 2}, {2, 2});
  mismatched.row_context.pop_back();
  ExpectFresh(mismatched, 0, {});
}

}  // namespace
}  // namespace rollout::engine
