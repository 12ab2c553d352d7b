#include "algorithms/seeded_choice.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

namespace rollout::algorithms {
namespace {

TEST(ChooseSeeded, ChoosesTheRequestedNumberAmongTheCandidatesOnly) {
  const at::Tensor candidates = at::rand({7, 9}) > 0.5;
  const int64_t available = candidates.sum().item<int64_t>();
  for (int64_t count : {int64_t{0}, int64_t{1}, int64_t{5}, available, available + 3}) {
    const at::Tensor chosen = ChooseSeeded(candidates, count, 11);
    EXPECT_EQ(chosen.sizes(), candidates.sizes());
    EXPECT_EQ(chosen.scalar_type(), at::kBool);
    EXPECT_EQ(chosen.sum().item<int64_t>(), std::min(count, available)) << count;
    EXPECT_FALSE(chosen.logical_and(candidates.logical_not()).any().item<bool>()) << count;
  }
  EXPECT_FALSE(ChooseSeeded(candidates, -1, 11).any().item<bool>());
  EXPECT_FALSE(ChooseSeeded(at::zeros({0, 4}, at::kBool), 3, 11).any().item<bool>());
}

TEST(ChooseSeeded, TheSeedAloneDecides) {
  const at::Tensor candidates = at::ones({4, 16}, at::kBool);
  EXPECT_TRUE(at::equal(ChooseSeeded(candidates, 6, 42), ChooseSeeded(candidates, 6, 42)));
  int differing = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    differing += at::equal(ChooseSeeded(candidates, 6, 42), ChooseSeeded(candidates, 6, 42 + seed)) ? 0 : 1;
  }
  EXPECT_GE(differing, 7);
}

TEST(ChooseSeeded, EveryCandidateIsAboutEquallyLikely) {
  // One of four candidates, over 4,000 seeds: each should win ~1,000 times (the binomial
  // standard deviation is ~27).
  const at::Tensor candidates = at::tensor({1, 0, 1, 1, 0, 1}) != 0;
  std::array<int, 6> wins{};
  for (uint64_t seed = 0; seed < 4000; ++seed) {
    const at::Tensor chosen = ChooseSeeded(candidates, 1, seed);
    for (int i = 0; i < 6; ++i) wins[i] += chosen[i].item<bool>() ? 1 : 0;
  }
  for (int i : {0, 2, 3, 5}) EXPECT_NEAR(wins[i], 1000, 120) << i;
  EXPECT_EQ(wins[1] + wins[4], 0);
}

}  // namespace
}  // namespace rollout::algorithms
