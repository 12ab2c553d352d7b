#include "algorithms/optimal_token_baseline.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "algorithms/advantages.h"

namespace rollout::algorithms {
namespace {

at::Tensor Doubles(std::vector<double> values, at::IntArrayRef shape) {
  return at::tensor(values, at::kDouble).reshape(shape);
}

void ExpectClose(const at::Tensor& actual, const at::Tensor& expected, double tolerance = 1e-9) {
  ASSERT_EQ(actual.sizes(), expected.sizes());
  EXPECT_TRUE(at::allclose(actual, expected.to(actual.scalar_type()), tolerance, tolerance))
      << "actual:\n" << actual << "\nexpected:\n" << expected;
}

struct OtbBatch {
  at::Tensor rewards, mask, index, old_log_probs, sum_pi_squared, is_weights;
};

// Random rows in 4 groups of 4 (one more row alone in its group), right-padded responses
// of 1-7 tokens, log-probs and squared-probability sums a softmax could give.
OtbBatch RandomOtbBatch() {
  OtbBatch b;
  const int64_t rows = 17, width = 7;
  b.rewards = at::randn({rows, width}, at::kDouble);
  b.mask = (at::arange(width).unsqueeze(0) < at::randint(1, width + 1, {rows, 1})).to(at::kDouble);
  b.index = at::cat({at::arange(16, at::kLong).remainder(4), at::full({1}, 9, at::kLong)});
  const at::Tensor p = at::rand({rows, width}, at::kDouble) * 0.9 + 0.05;
  b.old_log_probs = p.log();
  b.sum_pi_squared = p.square() + (1 - p).square() * at::rand({rows, width}, at::kDouble);
  b.is_weights = at::rand({rows, width}, at::kDouble) * 2;
  return b;
}

// verl's loops written out one row, group and position at a time: returns G, energy W,
// the group's per-position baseline, the unique longest row's zero tail.
at::Tensor LoopReference(const OtbBatch& b, bool with_is_weights) {
  const int64_t rows = b.rewards.size(0), width = b.rewards.size(1);
  auto r = b.rewards.accessor<double, 2>();
  auto m = b.mask.accessor<double, 2>();
  auto lp = b.old_log_probs.accessor<double, 2>();
  auto s = b.sum_pi_squared.accessor<double, 2>();
  auto rho = b.is_weights.accessor<double, 2>();
  std::vector<std::vector<double>> g(rows, std::vector<double>(width)), w = g, base = g;
  std::map<int64_t, std::vector<int64_t>> groups;
  for (int64_t i = 0; i < rows; ++i) {
    groups[b.index[i].item<int64_t>()].push_back(i);
    double to_go = 0, energy = 0;
    for (int64_t t = width - 1; t >= 0; --t) g[i][t] = to_go += r[i][t] * m[i][t];
    for (int64_t t = 0; t < width; ++t) {
      const double weight = (1 - 2 * std::exp(lp[i][t]) + s[i][t]) * (with_is_weights ? rho[i][t] * rho[i][t] : 1);
      w[i][t] = energy += weight * m[i][t];
    }
  }
  for (const auto& [id, members] : groups) {
    if (members.size() == 1) continue;
    for (int64_t t = 0; t < width; ++t) {
      double numerator = 0, denominator = 1e-8;
      for (int64_t i : members) {
        numerator += g[i][t] * w[i][t] * m[i][t];
        denominator += w[i][t] * m[i][t];
      }
      for (int64_t i : members) base[i][t] = numerator / denominator;
    }
    std::vector<std::pair<double, int64_t>> lengths;
    for (int64_t i : members) lengths.push_back({b.mask[i].sum().item<double>(), i});
    std::sort(lengths.begin(), lengths.end());
    const auto& [longest, row] = lengths.back();
    const double second = lengths[lengths.size() - 2].first;
    if (longest > second) {
      for (int64_t t = static_cast<int64_t>(second); t < width; ++t) base[row][t] = 0;
    }
  }
  at::Tensor advantages = at::zeros({rows, width}, at::kDouble);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t t = 0; t < width; ++t) advantages[i][t] = (g[i][t] - base[i][t]) * m[i][t];
  }
  return advantages;
}

// Two rows of one group, p = 0.5 and s = 0.5 at every token (w = 0.5):
//   G = [1, 1] and [2, 0], W = [0.5, 1] and [0.5, 0.5 (masked)];
//   B_0 = (1 * 0.5 + 2 * 0.5) / 1 = 1.5, B_1 = (1 * 1) / 1 = 1;
// the first row is the unique longest, so its baseline is 0 from the second row's
// length (1) on: advantages [1 - 1.5, 1 - 0] and [2 - 1.5, 0].
TEST(OptimalTokenBaseline, HandComputedGroupWithZeroTail) {
  const at::Tensor rewards = Doubles({0, 1, 2, 0}, {2, 2});
  const at::Tensor mask = Doubles({1, 1, 1, 0}, {2, 2});
  const at::Tensor log_half = at::full({2, 2}, std::log(0.5), at::kDouble);
  const at::Tensor half = at::full({2, 2}, 0.5, at::kDouble);
  const Advantages out =
      OptimalTokenBaselineAdvantages(rewards, mask, at::zeros({2}, at::kLong), log_half, half, at::Tensor()).value();
  ExpectClose(out.returns, Doubles({1, 1, 2, 0}, {2, 2}));
  ExpectClose(out.advantages, Doubles({-0.5, 1, 0.5, 0}, {2, 2}), 1e-7);
}

TEST(OptimalTokenBaseline, MatchesVerlsLoopsWithAndWithoutIsWeights) {
  at::manual_seed(21);
  for (int trial = 0; trial < 5; ++trial) {
    const OtbBatch b = RandomOtbBatch();
    const Advantages plain = OptimalTokenBaselineAdvantages(b.rewards, b.mask, b.index, b.old_log_probs,
                                                            b.sum_pi_squared, at::Tensor())
                                 .value();
    ExpectClose(plain.advantages, LoopReference(b, false));
    const Advantages weighted = OptimalTokenBaselineAdvantages(b.rewards, b.mask, b.index, b.old_log_probs,
                                                               b.sum_pi_squared, b.is_weights)
                                    .value();
    ExpectClose(weighted.advantages, LoopReference(b, true));
    ExpectClose(weighted.returns, (b.rewards * b.mask).flip({-1}).cumsum(-1).flip({-1}));
  }
}

TEST(OptimalTokenBaseline, AGroupOfOneKeepsItsReturns) {
  const OtbBatch b = RandomOtbBatch();
  const Advantages out =
      OptimalTokenBaselineAdvantages(b.rewards, b.mask, b.index, b.old_log_probs, b.sum_pi_squared, at::Tensor())
          .value();
  ExpectClose(out.advantages[16], out.returns[16] * b.mask[16]);
}

// With every mask a prefix and no empty row the multi-turn estimator numbers tokens as
// the columns do: the same advantages.
TEST(TirOptimalTokenBaseline, EqualsTheSingleTurnOneForPrefixMasks) {
  at::manual_seed(22);
  const OtbBatch b = RandomOtbBatch();
  const Advantages single = OptimalTokenBaselineAdvantages(b.rewards, b.mask, b.index, b.old_log_probs,
                                                           b.sum_pi_squared, b.is_weights)
                                .value();
  const Advantages multi = TirOptimalTokenBaselineAdvantages(b.rewards, b.mask, b.index, b.old_log_probs,
                                                             b.sum_pi_squared, b.is_weights)
                               .value();
  ExpectClose(multi.advantages, single.advantages);
  ExpectClose(multi.returns, single.returns);
}

// Tool tokens (mask 0) between a row's own tokens: the multi-turn estimator compares the
// rows' k-th own tokens, i.e. gives the advantages the single-turn one gives the rows
// with their tool tokens cut out, put back at the own tokens' columns.
TEST(TirOptimalTokenBaseline, ComparesTheRowsOwnTokensInOrder) {
  at::manual_seed(23);
  OtbBatch compact = RandomOtbBatch();
  const int64_t rows = compact.rewards.size(0), width = compact.rewards.size(1);
  // Each row's tokens spread over twice the width, a tool token after every own one.
  OtbBatch spread;
  auto widen = [&](const at::Tensor& values, double fill) {
    return at::stack({values, at::full_like(values, fill)}, -1).reshape({rows, 2 * width});
  };
  spread.rewards = widen(compact.rewards * compact.mask, 0);
  spread.mask = widen(compact.mask, 0);
  spread.index = compact.index;
  spread.old_log_probs = widen(compact.old_log_probs, -3);
  spread.sum_pi_squared = widen(compact.sum_pi_squared, 0.9);
  spread.is_weights = widen(compact.is_weights, 1);
  compact.rewards = compact.rewards * compact.mask;
  const Advantages want = OptimalTokenBaselineAdvantages(compact.rewards, compact.mask, compact.index,
                                                         compact.old_log_probs, compact.sum_pi_squared,
                                                         compact.is_weights)
                              .value();
  const Advantages got = TirOptimalTokenBaselineAdvantages(spread.rewards, spread.mask, spread.index,
                                                           spread.old_log_probs, spread.sum_pi_squared,
                                                           spread.is_weights)
                             .value();
  ExpectClose(got.advantages, widen(want.advantages, 0));
}

// A row without tokens of its own (an aborted sample) leaves its group in the multi-turn
// estimator, so its one partner keeps its returns; the single-turn one counts it, but
// as the shortest row, which zeroes its partner's baseline from 0 on (the zero tail):
// the same advantages.
TEST(TirOptimalTokenBaseline, AnEmptyRowLeavesItsPartnerItsReturns) {
  const at::Tensor rewards = Doubles({0, 1, 0, 0}, {2, 2});
  const at::Tensor mask = Doubles({1, 1, 0, 0}, {2, 2});
  const at::Tensor log_probs = at::full({2, 2}, std::log(0.5), at::kDouble);
  const at::Tensor squares = at::full({2, 2}, 0.5, at::kDouble);
  const at::Tensor group = at::zeros({2}, at::kLong);
  const Advantages multi =
      TirOptimalTokenBaselineAdvantages(rewards, mask, group, log_probs, squares, at::Tensor()).value();
  ExpectClose(multi.advantages, Doubles({1, 1, 0, 0}, {2, 2}));
  const Advantages single =
      OptimalTokenBaselineAdvantages(rewards, mask, group, log_probs, squares, at::Tensor()).value();
  ExpectClose(single.advantages, Doubles({1, 1, 0, 0}, {2, 2}));
}

TEST(OptimalTokenBaseline, ComputeAdvantagesNamesAMissingSumPiSquared) {
  const OtbBatch b = RandomOtbBatch();
  AdvantageInputs inputs;
  inputs.token_level_rewards = b.rewards;
  inputs.response_mask = b.mask;
  inputs.index = b.index;
  inputs.old_log_probs = b.old_log_probs;
  for (const std::string name : {"optimal_token_baseline", "tir_optimal_token_baseline"}) {
    const absl::Status status = ComputeAdvantages(name, inputs, AdvantageOptions()).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(status.message(), name + ": sum_pi_squared is missing; expected [17, 7] like token_level_rewards");
  }
  inputs.sum_pi_squared = b.sum_pi_squared;
  inputs.old_log_probs = b.old_log_probs.clone();
  inputs.old_log_probs[3][0] = std::nan("");
  EXPECT_NE(ComputeAdvantages("optimal_token_baseline", inputs, AdvantageOptions()).status().message().find(
                "old_log_probs: 1 NaN"),
            std::string::npos);
}

}  // namespace
}  // namespace rollout::algorithms
