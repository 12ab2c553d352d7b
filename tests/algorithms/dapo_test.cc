#include "algorithms/dapo.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace rollout::algorithms {
namespace {

at::Tensor Doubles(std::vector<double> values) { return at::tensor(values, at::kDouble); }
at::Tensor Longs(std::vector<int64_t> values) { return at::tensor(values, at::kLong); }

void ExpectClose(const at::Tensor& actual, const at::Tensor& expected) {
  EXPECT_TRUE(at::allclose(actual, expected, 1e-12, 1e-12))
      << "actual:\n" << actual << "\nexpected:\n" << expected;
}

bool Mentions(const absl::Status& status, const std::string& text) {
  return status.message().find(text) != std::string::npos;
}

OverlongBufferOptions Buffer(int64_t len, double penalty_factor, int64_t max_response_length) {
  OverlongBufferOptions options;
  options.enable = true;
  options.len = len;
  options.penalty_factor = penalty_factor;
  options.max_response_length = max_response_length;
  return options;
}

TEST(OverlongShaping, PenalisesLengthsInsideTheBuffer) {
  // L_max 20, L_buf 4: expected length 16. Lengths 10, 16, 18, 20 exceed it by -6, 0, 2, 4:
  // penalties min(-exceed / 4 * 1, 0) = 0, 0, -0.5, -1.
  absl::StatusOr<OverlongShaping> shaped =
      ShapeOverlongScores(Doubles({1, 1, 1, 0}), Longs({10, 16, 18, 20}), Buffer(4, 1.0, 20));
  ASSERT_TRUE(shaped.ok()) << shaped.status();
  ExpectClose(shaped->penalties, Doubles({0, 0, -0.5, -1}));
  ExpectClose(shaped->scores, Doubles({1, 1, 0.5, -1}));
}

TEST(OverlongShaping, PenaltyFactorScalesThePenalty) {
  // Same buffer, factor 0.5: length 19 exceeds by 3, penalty -3 / 4 * 0.5 = -0.375.
  OverlongShaping shaped =
      ShapeOverlongScores(Doubles({2, 2}), Longs({19, 20}), Buffer(4, 0.5, 20)).value();
  ExpectClose(shaped.penalties, Doubles({-0.375, -0.5}));
  ExpectClose(shaped.scores, Doubles({1.625, 1.5}));
}

TEST(OverlongShaping, DisabledPassesScoresThrough) {
  OverlongBufferOptions options = Buffer(4, 1.0, 20);
  options.enable = false;
  OverlongShaping shaped = ShapeOverlongScores(Doubles({3, -1}), Longs({20, 20}), options).value();
  ExpectClose(shaped.scores, Doubles({3, -1}));
  ExpectClose(shaped.penalties, Doubles({0, 0}));
}

TEST(OverlongShaping, KeepsTheScoresDtypeForAnyIntegralLengths) {
  OverlongShaping shaped = ShapeOverlongScores(at::ones({2}), at::tensor({18, 4}, at::kInt),
                                               Buffer(4, 1.0, 20))
                               .value();
  EXPECT_EQ(shaped.scores.scalar_type(), at::kFloat);
  EXPECT_NEAR(shaped.scores[0].item<float>(), 0.5f, 1e-7);
}

TEST(OverlongShaping, RejectsBadInputs) {
  const OverlongBufferOptions ok = Buffer(4, 1.0, 20);
  EXPECT_TRUE(Mentions(ShapeOverlongScores(Doubles({1}), Longs({3}), Buffer(0, 1.0, 20)).status(),
                       "overlong_buffer.len and max_response_length must be positive"));
  EXPECT_TRUE(Mentions(ShapeOverlongScores(Doubles({1, 1}), Longs({3, 21}), ok).status(),
                       "response_lengths must be in [0, max_response_length = 20]"));
  EXPECT_TRUE(Mentions(ShapeOverlongScores(Doubles({1, 1}), Longs({-1, 2}), ok).status(),
                       "got values in [-1, 2]"));
  EXPECT_TRUE(Mentions(ShapeOverlongScores(Doubles({1, 1}), Doubles({3, 4}), ok).status(),
                       "response_lengths must be integral"));
  EXPECT_TRUE(Mentions(ShapeOverlongScores(Doubles({1, 1}), Longs({3}), ok).status(),
                       "response_lengths must be [2]"));
  EXPECT_TRUE(Mentions(ShapeOverlongScores(Longs({1}), Longs({3}), ok).status(),
                       "scores must be [B] floating"));
  absl::Status nan = ShapeOverlongScores(Doubles({1, std::numeric_limits<double>::quiet_NaN()}),
                                         Longs({3, 4}), ok)
                         .status();
  EXPECT_EQ(nan.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(nan.message(), "scores: 1 NaN and 0 infinite values (first at [1])");
}

TEST(FilterGroups, DropsGroupsWhoseScoresAllAgree) {
  // Group 0 (1, 1) and group 3 (2, 2, 2) agree: dropped. Group 1 (0, 1) differs and
  // group 2 (0.5) is alone (verl keeps lone rows): kept.
  absl::StatusOr<GroupFilter> filter =
      FilterGroups(Doubles({1, 1, 0, 1, 0.5, 2, 2, 2}), Longs({0, 0, 1, 1, 2, 3, 3, 3}));
  ASSERT_TRUE(filter.ok()) << filter.status();
  EXPECT_TRUE(at::equal(filter->keep, at::tensor({0, 0, 1, 1, 1, 0, 0, 0}).to(at::kBool)))
      << filter->keep;
  EXPECT_EQ(filter->num_kept_groups, 2);
}

TEST(FilterGroups, GroupsByIdNotByPosition) {
  // Ids interleave: group 9 = rows 0, 2 (scores 1, 1) dropped; group -4 = rows 1, 3 (0, 1)
  // kept.
  GroupFilter filter = FilterGroups(Doubles({1, 0, 1, 1}), Longs({9, -4, 9, -4})).value();
  EXPECT_TRUE(at::equal(filter.keep, at::tensor({0, 1, 0, 1}).to(at::kBool))) << filter.keep;
  EXPECT_EQ(filter.num_kept_groups, 1);
}

TEST(FilterGroups, IdenticalInexactValuesAreDropped) {
  // Three 0.1 scores: np.std would give ~1e-17 and keep them; equal values drop here.
  GroupFilter filter = FilterGroups(Doubles({0.1, 0.1, 0.1}), Longs({5, 5, 5})).value();
  EXPECT_FALSE(filter.keep.any().item<bool>());
  EXPECT_EQ(filter.num_kept_groups, 0);
}

TEST(FilterGroups, AcceptsBooleanAccuracy) {
  GroupFilter filter =
      FilterGroups(at::tensor({1, 1, 0, 1}).to(at::kBool), Longs({0, 0, 1, 1})).value();
  EXPECT_TRUE(at::equal(filter.keep, at::tensor({0, 0, 1, 1}).to(at::kBool))) << filter.keep;
}

TEST(FilterGroups, EmptyBatchKeepsNothing) {
  GroupFilter filter = FilterGroups(at::zeros({0}), at::zeros({0}, at::kLong)).value();
  EXPECT_EQ(filter.keep.numel(), 0);
  EXPECT_EQ(filter.num_kept_groups, 0);
}

TEST(FilterGroups, RejectsBadInputs) {
  absl::Status nan =
      FilterGroups(Doubles({1, std::numeric_limits<double>::infinity()}), Longs({0, 0})).status();
  EXPECT_EQ(nan.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(nan.message(), "metric: 0 NaN and 1 infinite values (first at [1])");
  EXPECT_TRUE(Mentions(FilterGroups(Doubles({1, 2}), at::zeros({2}, at::kInt)).status(),
                       "group_ids must be int64"));
  EXPECT_TRUE(Mentions(FilterGroups(Doubles({1, 2}), Longs({0})).status(),
                       "group_ids must be [2]"));
  EXPECT_TRUE(Mentions(FilterGroups(at::zeros({2, 2}), Longs({0, 0})).status(),
                       "metric must be [B]"));
}

}  // namespace
}  // namespace rollout::algorithms
