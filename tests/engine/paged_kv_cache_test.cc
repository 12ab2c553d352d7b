// PagedKvCache's host-side step analysis: which steps attend over their own keys and
// values (every row with tokens starts its sequence) and the row offsets they use.
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

TEST(PagedKvCacheFreshRows, RowsThatStartTheirSequencesGiveTheirOffsets) {
  EXPECT_EQ(PagedKvCache::FreshRowOffsets(Layout({5, 1, 130}, {5, 1, 130})),
            (std::vector<int32_t>{0, 5, 6, 136}));
}

TEST(PagedKvCacheFreshRows, RowsWithoutTokensAreLeftOut) {
  EXPECT_EQ(PagedKvCache::FreshRowOffsets(Layout({0, 3, 0, 2}, {40, 3, 0, 2})),
            (std::vector<int32_t>{0, 3, 5}));
}

TEST(PagedKvCacheFreshRows, ARowWithCachedContextRulesTheStepOut) {
  // A decode token, a later prefill chunk, a prompt whose prefix was cached.
  EXPECT_TRUE(PagedKvCache::FreshRowOffsets(Layout({4, 1}, {4, 9})).empty());
  EXPECT_TRUE(PagedKvCache::FreshRowOffsets(Layout({16, 8}, {16, 24})).empty());
  EXPECT_TRUE(PagedKvCache::FreshRowOffsets(Layout({7}, {23})).empty());
}

TEST(PagedKvCacheFreshRows, StepsWithoutTokensOrHostLayoutHaveNone) {
  EXPECT_TRUE(PagedKvCache::FreshRowOffsets(Layout({0, 0}, {3, 0})).empty());
  EXPECT_TRUE(PagedKvCache::FreshRowOffsets(StepAttention()).empty());  // a CUDA-graph step
  StepAttention mismatched = Layout({2, 2}, {2, 2});
  mismatched.row_context.pop_back();
  EXPECT_TRUE(PagedKvCache::FreshRowOffsets(mismatched).empty());
}

}  // namespace
}  // namespace rollout::engine
