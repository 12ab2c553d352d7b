#include "engine/input_ids.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace rollout::engine {
namespace {

TEST(ResolveInputIds, DrawnTokensReplaceThePendingEntries) {
  const at::Tensor host_ids = at::tensor(std::vector<int64_t>{5, 0, 7, 0}, at::kLong);
  const at::Tensor sources = at::tensor(std::vector<int64_t>{-1, 2, -1, 0}, at::kLong);
  const at::Tensor previous = at::tensor(std::vector<int64_t>{40, 41, 42}, at::kLong);
  const at::Tensor ids = ResolveInputIds(host_ids, sources, previous);
  EXPECT_TRUE(at::equal(ids, at::tensor(std::vector<int64_t>{5, 42, 7, 40}, at::kLong)));
}

TEST(ResolveInputIds, WithoutPendingEntriesKeepsTheHostIds) {
  const at::Tensor host_ids = at::tensor(std::vector<int64_t>{3, 1}, at::kLong);
  const at::Tensor sources = at::full({2}, -1, at::kLong);
  const at::Tensor previous = at::zeros({1}, at::kLong);
  EXPECT_TRUE(at::equal(ResolveInputIds(host_ids, sources, previous), host_ids));
}

}  // namespace
}  // namespace rollout::engine
