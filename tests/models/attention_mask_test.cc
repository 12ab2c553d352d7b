// RowRotation: which padding layouts it takes, where it moves each row, and that Undo
// inverts Apply.
#include "models/attention_mask.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace rollout::models {
namespace {

at::Tensor Rows(std::initializer_list<int64_t> values, int64_t t) {
  return at::tensor(std::vector<int64_t>(values), at::kLong).view({-1, t});
}

TEST(RowRotation, MovesEachRunOfTokensToTheFront) {
  // Left padding, left and right padding, right padding only, all padding.
  const at::Tensor mask = Rows({0, 0, 1, 1, 1,  //
                                0, 1, 1, 0, 0,  //
                                1, 1, 0, 0, 0,  //
                                0, 0, 0, 0, 0},
                               5);
  const std::optional<RowRotation> rotation = RowRotation::ForTokenRuns(mask);
  ASSERT_TRUE(rotation.has_value());
  EXPECT_FALSE(rotation->identity());
  const at::Tensor ids = at::arange(20, at::kLong).view({4, 5});
  const at::Tensor want = Rows({2, 3, 4, 0, 1,  //
                                6, 7, 8, 9, 5,  //
                                10, 11, 12, 13, 14,  //
                                15, 16, 17, 18, 19},
                               5);
  EXPECT_TRUE(at::equal(rotation->Apply(ids), want));
  EXPECT_TRUE(at::equal(rotation->Apply(mask), Rows({1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, 5)));
  const at::Tensor hidden = at::randn({4, 5, 3});
  EXPECT_TRUE(at::equal(rotation->Undo(rotation->Apply(hidden)), hidden));
}

TEST(RowRotation, RightPaddingAloneMovesNothing) {
  const std::optional<RowRotation> rotation = RowRotation::ForTokenRuns(Rows({1, 1, 1, 1, 0, 0}, 3));
  ASSERT_TRUE(rotation.has_value());
  EXPECT_TRUE(rotation->identity());
}

TEST(RowRotation, RefusesARowWithAHole) {
  EXPECT_FALSE(RowRotation::ForTokenRuns(Rows({0, 1, 1, 1, 1, 0, 1, 0}, 4)).has_value());
  EXPECT_FALSE(RowRotation::ForTokenRuns(Rows({1, 0, 1}, 3)).has_value());
}

}  // namespace
}  // namespace rollout::models
