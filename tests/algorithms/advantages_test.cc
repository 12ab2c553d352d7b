#include "algorithms/advantages.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "algorithms/masked_ops.h"
#include "algorithms/optimal_token_baseline.h"

namespace rollout::algorithms {
namespace {

at::Tensor Doubles(std::vector<double> values, at::IntArrayRef shape) {
  return at::tensor(values, at::kDouble).reshape(shape);
}

at::Tensor Ids(std::vector<int64_t> ids) { return at::tensor(ids, at::kLong); }

void ExpectClose(const at::Tensor& actual, const at::Tensor& expected, double tolerance = 1e-9) {
  ASSERT_EQ(actual.sizes(), expected.sizes());
  EXPECT_TRUE(at::allclose(actual, expected.to(actual.scalar_type()), tolerance, tolerance))
      << "actual:\n" << actual << "\nexpected:\n" << expected;
}

bool Mentions(const absl::Status& status, const std::string& text) {
  return status.message().find(text) != std::string::npos;
}

// Random rewards, values and a right-padded mask (every row keeps >= 2 tokens) with
// 4 groups of 3 rows, interleaved.
struct RandomBatch {
  at::Tensor rewards = at::randn({12, 6}, at::kDouble);
  at::Tensor values = at::randn({12, 6}, at::kDouble);
  at::Tensor mask = at::arange(6).unsqueeze(0) < at::randint(2, 7, {12, 1});
  at::Tensor index = at::arange(12, at::kLong).remainder(4) * 10 + 3;
};

TEST(GaeAdvantage, HandComputedWithAMaskedToken) {
  // gamma 0.9, lam 0.8, token 2 masked (its reward and value are ignored):
  // t=3: delta = 1 - 0.3 = 0.7, gae 0.7
  // t=2: masked, carries next value 0.3 and gae 0.7
  // t=1: delta = 0.5 + 0.9 * 0.3 - 0.4 = 0.37, gae = 0.37 + 0.72 * 0.7 = 0.874
  // t=0: delta = 0.9 * 0.4 - 0.2 = 0.16, gae = 0.16 + 0.72 * 0.874 = 0.78928
  at::Tensor rewards = Doubles({0.0, 0.5, 7.0, 1.0}, {1, 4});
  at::Tensor values = Doubles({0.2, 0.4, 9.0, 0.3}, {1, 4});
  at::Tensor mask = Doubles({1, 1, 0, 1}, {1, 4});
  absl::StatusOr<at::Tensor> raw = GaeRawAdvantages(rewards, values, mask, 0.9, 0.8);
  ASSERT_TRUE(raw.ok()) << raw.status();
  ExpectClose(*raw, Doubles({0.78928, 0.874, 0.7, 0.7}, {1, 4}));

  // Whitened over the three unmasked values (mean 0.78776, unbiased var 0.0074302);
  // literals from a float64 plain-Python transcription of verl's masked_whiten (with the
  // 1e-8 of masked_mean's denominator).
  absl::StatusOr<Advantages> gae = GaeAdvantages(rewards, values, mask, 0.9, 0.8);
  ASSERT_TRUE(gae.ok()) << gae.status();
  ExpectClose(gae->advantages, Doubles({0.0174692835002429, 0.9911502975686745,
                                        -1.008619490532212, -1.008619490532212},
                                       {1, 4}));
  ExpectClose(gae->returns, *raw + values);
}

TEST(GaeAdvantage, LambdaAndGammaOneGiveRewardToGoMinusValues) {
  // With gamma = lam = 1 the TD errors telescope: raw_t = sum_{k >= t, unmasked} r_k - v_t.
  RandomBatch batch;
  batch.mask = at::rand({12, 6}) > 0.3;  // holes anywhere, as in multi-turn data
  at::Tensor raw = GaeRawAdvantages(batch.rewards, batch.values, batch.mask, 1.0, 1.0).value();
  at::Tensor m = batch.mask.to(at::kDouble);
  at::Tensor to_go = (batch.rewards * m).flip({-1}).cumsum(-1).flip({-1});
  ExpectClose(raw * m, (to_go - batch.values) * m);
}

TEST(GaeAdvantage, WhitensOverUnmaskedTokens) {
  RandomBatch batch;
  Advantages gae = GaeAdvantages(batch.rewards, batch.values, batch.mask, 0.95, 0.9).value();
  EXPECT_NEAR(MaskedMean(gae.advantages, batch.mask).item<double>(), 0.0, 1e-9);
  EXPECT_NEAR(MaskedVar(gae.advantages, batch.mask).value().item<double>(), 1.0, 1e-6);
}

TEST(GaeAdvantage, NeedsTwoUnmaskedTokensToWhiten) {
  absl::StatusOr<Advantages> gae = GaeAdvantages(Doubles({1, 2}, {1, 2}), Doubles({0, 0}, {1, 2}),
                                                 Doubles({1, 0}, {1, 2}), 1.0, 1.0);
  EXPECT_EQ(gae.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(gae.status(), "whitening advantages")) << gae.status();
}

TEST(GrpoAdvantage, HandComputedGroups) {
  // Outcome rewards sit on each row's last valid token. Group 0 scores (1, 0, 0): mean 1/3,
  // std sqrt(1/3); group 7 (2, 4): mean 3, std sqrt 2; group 3 (5) alone: mean 0, std 1.
  // Advantage (s - mean) / (std + 1e-6); literals from float64 plain Python.
  at::Tensor rewards = Doubles({0, 1, 0,  0, 0, 0,  2, 0, 0,  0, 0, 4,  0, 0, 0,  0, 5, 0}, {6, 3});
  at::Tensor mask = Doubles({1, 1, 0,  1, 1, 1,  1, 0, 0,  1, 1, 1,  1, 1, 0,  1, 1, 0}, {6, 3});
  at::Tensor index = Ids({0, 0, 7, 7, 0, 3});
  Advantages grpo = GrpoAdvantages(rewards, mask, index, /*norm_adv_by_std_in_grpo=*/true).value();
  const double up = 1.1546985383827155, down = -0.5773492691913577;
  const double low = -0.7071062811869011, alone = 5 / (1 + 1e-6);
  at::Tensor per_row = Doubles({up, down, low, -low, down, alone}, {6, 1});
  ExpectClose(grpo.advantages, per_row * mask);
  ExpectClose(grpo.returns, grpo.advantages);
}

// A sample over-sampling aborted has no response token; verl's reward manager puts its
// score (here -1) in the last column and its estimators sum the rewards unmasked, so the
// group scores (1, 1, -1): mean 1/3, std sqrt(4/3). The aborted row's advantages are 0.
TEST(GrpoAdvantage, ARowWithoutResponseTokensCountsItsScoreInItsGroup) {
  at::Tensor rewards = Doubles({0, 1, 0,  0, 0, 1,  0, 0, -1}, {3, 3});
  at::Tensor mask = Doubles({1, 1, 0,  1, 1, 1,  0, 0, 0}, {3, 3});
  Advantages grpo = GrpoAdvantages(rewards, mask, Ids({0, 0, 0}), /*norm_adv_by_std_in_grpo=*/true).value();
  const double up = 0.5773497691900589;  // (1 - 1/3) / (sqrt(4/3) + 1e-6), float64 Python
  ExpectClose(grpo.advantages, Doubles({up, up, 0,  up, up, up,  0, 0, 0}, {3, 3}));
}

// verl's grpo_vectorized (group_mean_std): the variance floored at epsilon, so group 0's
// nearly equal scores (1, 1.0005; variance 1.25e-7) get std 1e-3, where grpo's 3.5e-4
// makes them +-0.705. Groups 1 (1, 0, 0) and the lone 5 as grpo. Literals from verl's
// formulas in float64 PyTorch.
TEST(GrpoVectorizedAdvantage, FloorsTheVarianceAtEpsilon) {
  at::Tensor scores = Doubles({1, 1.0005, 1, 0, 0, 5}, {6, 1});
  at::Tensor mask = at::ones({6, 1});
  const at::Tensor index = Ids({0, 0, 1, 1, 1, 2});
  Advantages vectorized = GrpoVectorizedAdvantages(scores, mask, index, true).value();
  ExpectClose(vectorized.advantages,
              Doubles({-0.24975024975011134, 0.24975024975033316, 1.1546985383827155, -0.5773492691913577,
                       -0.5773492691913577, 4.999995000005001}, {6, 1}),
              1e-7);
  EXPECT_NEAR(GrpoAdvantages(scores, mask, index, true).value().advantages[1][0].item<double>(), 0.7051, 1e-3);
  ExpectClose(GrpoVectorizedAdvantages(scores, mask, index, false).value().advantages,
              GrpoAdvantages(scores, mask, index, false).value().advantages);
}

// verl's rloo_vectorized: rloo's leave-one-out, but the lone row gets 0 (rloo keeps 5).
TEST(RlooVectorizedAdvantage, ALoneRowGetsZero) {
  at::Tensor scores = Doubles({1, 1.0005, 1, 0, 0, 5}, {6, 1});
  const at::Tensor index = Ids({0, 0, 1, 1, 1, 2});
  ExpectClose(RlooVectorizedAdvantages(scores, at::ones({6, 1}), index).value().advantages,
              Doubles({-0.0005, 0.0005, 1, -0.5, -0.5, 0}, {6, 1}), 1e-12);
  EXPECT_EQ(RlooAdvantages(scores, at::ones({6, 1}), index).value().advantages[5][0].item<double>(), 5);
}

TEST(GrpoAdvantage, WithoutStdNormalisationSubtractsTheGroupMean) {
  // Dr.GRPO: group 0 (1, 0, 0) - 1/3; group 7 (2, 4) - 3; group 3 (5) - 0.
  at::Tensor scores = Doubles({1, 0, 2, 4, 0, 5}, {6, 1});
  at::Tensor mask = at::ones({6, 1});
  Advantages grpo = GrpoAdvantages(scores, mask, Ids({0, 0, 7, 7, 0, 3}), false).value();
  ExpectClose(grpo.advantages, Doubles({2.0 / 3, -1.0 / 3, -1, 1, -1.0 / 3, 5}, {6, 1}));
}

TEST(GrpoAdvantage, SumsToZeroWithinEachGroup) {
  RandomBatch batch;
  for (bool norm : {true, false}) {
    at::Tensor advantages =
        GrpoAdvantages(batch.rewards, batch.mask, batch.index, norm).value().advantages;
    // Per-row advantage: the value at the first token (never masked here).
    at::Tensor per_row = advantages.select(1, 0);
    for (int64_t group : {3, 13, 23, 33}) {
      EXPECT_NEAR(per_row.masked_select(batch.index == group).sum().item<double>(), 0.0, 1e-9)
          << "norm " << norm << " group " << group;
    }
  }
}

TEST(GrpoAdvantage, IdenticalScoresGiveZero) {
  at::Tensor rewards = at::full({4, 3}, 0.7, at::kDouble);
  at::Tensor mask = at::ones({4, 3});
  for (bool norm : {true, false}) {
    at::Tensor advantages =
        GrpoAdvantages(rewards, mask, Ids({1, 1, 1, 1}), norm).value().advantages;
    EXPECT_EQ(advantages.abs().max().item<double>(), 0.0) << "norm " << norm;
  }
}

TEST(GrpoAdvantage, GroupOfOneIsItsScoreOverOnePlusEpsilon) {
  // verl gives a lone row mean 0 and std 1: (s - 0) / (1 + eps); with a zero score the
  // advantage is 0.
  at::Tensor rewards = Doubles({2, 0, 0, 0}, {2, 2});
  Advantages grpo = GrpoAdvantages(rewards, at::ones({2, 2}), Ids({4, 9}), true, 0.5).value();
  ExpectClose(grpo.advantages, Doubles({2 / 1.5, 2 / 1.5, 0, 0}, {2, 2}));
  Advantages plain = GrpoAdvantages(rewards, at::ones({2, 2}), Ids({4, 9}), false).value();
  ExpectClose(plain.advantages, Doubles({2, 2, 0, 0}, {2, 2}));
}

TEST(GrpoAdvantage, EmptyBatchGivesEmptyAdvantages) {
  absl::StatusOr<Advantages> grpo =
      GrpoAdvantages(at::zeros({0, 5}), at::zeros({0, 5}), at::zeros({0}, at::kLong), true);
  ASSERT_TRUE(grpo.ok()) << grpo.status();
  EXPECT_EQ(grpo->advantages.size(0), 0);
  EXPECT_EQ(grpo->advantages.size(1), 5);
}

TEST(RlooAdvantage, ScoreMinusTheMeanOfTheOthers) {
  // Group 0 (1, 0, 0): 1 - 0 = 1, 0 - 1/2 = -1/2 twice; group 2 (3) alone keeps 3.
  at::Tensor scores = Doubles({1, 0, 3, 0}, {4, 1});
  Advantages rloo = RlooAdvantages(scores * at::ones({4, 2}, at::kDouble) / 2,
                                   at::ones({4, 2}), Ids({0, 0, 2, 0})).value();
  ExpectClose(rloo.advantages, Doubles({1, 1, -0.5, -0.5, 3, 3, -0.5, -0.5}, {4, 2}));
  ExpectClose(rloo.returns, rloo.advantages);
}

TEST(GpgAdvantage, GroupMeanCentredAndScaledByTheShareOfRewardedRows) {
  // Scores (1, 0 | 1, 1 | 2): groups 0, 0 | 1, 1 | 2 alone; 4 of the 5 rows have a nonzero
  // score, so alpha = 5 / 4. Group 0 mean 1/2: +-0.625; group 1: 0, 0; group 2 alone
  // (mean 0): 2 * 1.25 = 2.5.
  at::Tensor scores = Doubles({1, 0, 1, 1, 2}, {5, 1});
  Advantages gpg = GpgAdvantages(scores * at::ones({5, 2}, at::kDouble) / 2, at::ones({5, 2}),
                                 Ids({0, 0, 1, 1, 2}))
                       .value();
  ExpectClose(gpg.advantages, Doubles({0.625, 0.625, -0.625, -0.625, 0, 0, 0, 0, 2.5, 2.5}, {5, 2}));
  ExpectClose(gpg.returns, gpg.advantages);
  // No rewarded row: alpha = 5 / 1, every advantage 0 (each group's scores equal).
  ExpectClose(GpgAdvantages(at::zeros({5, 2}, at::kDouble), at::ones({5, 2}), Ids({0, 0, 1, 1, 2}))
                  .value()
                  .advantages,
              at::zeros({5, 2}, at::kDouble));
}

TEST(OpoAdvantage, ScoreMinusTheGroupsLengthWeightedMean) {
  // Group 0: scores (1, 0, 0.5) over 1, 2 and 3 response tokens, baseline
  // (1 + 0 + 1.5) / 6 = 5/12; row 3 alone keeps its 2; rows 4 and 5 have no response
  // tokens (baseline 0, and no NaN from their zero total length).
  at::Tensor rewards = Doubles({1, 0, 0, 0, 0, 0, 0.5, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0}, {6, 3});
  at::Tensor mask = Doubles({1, 0, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0}, {6, 3});
  Advantages opo = OpoAdvantages(rewards, mask, Ids({7, 7, 7, 1, 4, 4})).value();
  const double a = 7.0 / 12, b = -5.0 / 12, c = 1.0 / 12;
  ExpectClose(opo.advantages, Doubles({a, 0, 0, b, b, 0, c, c, c, 2, 2, 0, 0, 0, 0, 0, 0, 0}, {6, 3}));
  ExpectClose(opo.returns, opo.advantages);
}

TEST(GrpoPassKAdvantage, OnlyTheBestRowGetsItsMarginOverTheRunnerUp) {
  // Group 3: scores (0, 1, 0.5): row 1 gets 1 - 0.5, divided by the group's std 0.5 (+
  // epsilon); group 5: a tie (2, 2) leaves every advantage 0.
  at::Tensor scores = Doubles({0, 1, 2, 0.5, 2}, {5, 1});
  at::Tensor rewards = scores * at::ones({5, 2}, at::kDouble) / 2;
  at::Tensor index = Ids({3, 3, 5, 3, 5});
  Advantages normed = GrpoPassKAdvantages(rewards, at::ones({5, 2}), index, true).value();
  const double best = 0.5 / (0.5 + 1e-6);
  ExpectClose(normed.advantages, Doubles({0, 0, best, best, 0, 0, 0, 0, 0, 0}, {5, 2}));
  ExpectClose(normed.returns, normed.advantages);
  Advantages plain = GrpoPassKAdvantages(rewards, at::ones({5, 2}), index, false).value();
  ExpectClose(plain.advantages, Doubles({0, 0, 0.5, 0.5, 0, 0, 0, 0, 0, 0}, {5, 2}));
}

TEST(GrpoPassKAdvantage, AGroupOfOneIsAnError) {
  absl::Status status =
      GrpoPassKAdvantages(at::ones({3, 2}, at::kDouble), at::ones({3, 2}), Ids({0, 0, 9}), true).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "needs at least 2 responses per prompt (rollout.n >= 2); row 2's group (index 9) has 1");
}

TEST(ReinforcePlusPlusAdvantage, HandComputedDiscountedReturns) {
  // gamma 0.5. Row 0 rewards (0, 0, 1): returns (0.25, 0.5, 1). Row 1 rewards (0, 2, 0)
  // with token 2 masked: returns (1, 2, 0). Whitened over the five unmasked returns
  // (mean 0.95, unbiased var 0.45), then masked; literals from a float64 plain-Python
  // transcription of verl's masked_whiten.
  at::Tensor rewards = Doubles({0, 0, 1, 0, 2, 0}, {2, 3});
  at::Tensor mask = Doubles({1, 1, 1, 1, 1, 0}, {2, 3});
  Advantages rpp = ReinforcePlusPlusAdvantages(rewards, mask, 0.5).value();
  ExpectClose(rpp.returns, Doubles({0.25, 0.5, 1, 1, 2, 0}, {2, 3}));
  ExpectClose(rpp.advantages,
              Doubles({-1.0434983761166212, -0.6708203836348448, 0.07453560132870798,
                       0.07453560132870798, 1.5652475712558136, 0},
                      {2, 3}));
}

TEST(ReinforcePlusPlusAdvantage, RunningReturnRestartsAfterAMaskedToken) {
  // gamma 1, token 1 masked: t=2 return 1; t=1 return 0 + 1 = 1, then the running return
  // restarts; t=0 return 0. (verl's "reset after EOS", also at holes.)
  at::Tensor rewards = Doubles({0, 0, 1, 0, 1, 0}, {2, 3});
  at::Tensor mask = Doubles({1, 0, 1, 1, 1, 1}, {2, 3});
  Advantages rpp = ReinforcePlusPlusAdvantages(rewards, mask, 1.0).value();
  ExpectClose(rpp.returns, Doubles({0, 1, 1, 1, 1, 0}, {2, 3}));
}

TEST(ReinforcePlusPlusBaselineAdvantage, GroupMeanThenBatchWhitening) {
  // Group 0 (1, 0) centres to (0.5, -0.5); group 1 (3) alone keeps 3. Over 2 tokens each:
  // mean 1, deviations (-0.5, -1.5, 2), unbiased var 13 / 5 = 2.6, so dev / sqrt(2.6);
  // literals from a float64 plain-Python transcription of verl's masked_whiten.
  at::Tensor rewards = Doubles({0, 1, 0, 0, 3, 0}, {3, 2});
  Advantages rppb =
      ReinforcePlusPlusBaselineAdvantages(rewards, at::ones({3, 2}), Ids({0, 0, 1})).value();
  const double a = -0.3100868351014832, b = -0.9302605073716952, c = 1.240347345574047;
  ExpectClose(rppb.advantages, Doubles({a, a, b, b, c, c}, {3, 2}));
  ExpectClose(rppb.returns, rppb.advantages);
}

TEST(RemaxAdvantage, RewardToGoMinusGreedyBaseline) {
  // Row 0: returns (1, 1, 1) - 0.4. Row 1 with token 2 masked: returns (1, 1, 0), the
  // baseline only on unmasked tokens: (0.8, 0.8, 0).
  at::Tensor rewards = Doubles({0, 0, 1, 0, 1, 0}, {2, 3});
  at::Tensor mask = Doubles({1, 1, 1, 1, 1, 0}, {2, 3});
  Advantages remax = RemaxAdvantages(rewards, Doubles({0.4, 0.2}, {2}), mask).value();
  ExpectClose(remax.returns, Doubles({1, 1, 1, 1, 1, 0}, {2, 3}));
  ExpectClose(remax.advantages, Doubles({0.6, 0.6, 0.6, 0.8, 0.8, 0}, {2, 3}));
}

AdvantageInputs InputsOf(const RandomBatch& batch) {
  AdvantageInputs inputs;
  inputs.token_level_rewards = batch.rewards;
  inputs.response_mask = batch.mask;
  inputs.values = batch.values;
  inputs.index = batch.index;
  inputs.reward_baselines = at::randn({12}, at::kDouble);
  const at::Tensor p = at::rand({12, 6}, at::kDouble) * 0.9 + 0.05;  // a sampled token's probability
  inputs.old_log_probs = p.log();
  inputs.sum_pi_squared = p.square() + (1 - p).square() * at::rand({12, 6}, at::kDouble);
  return inputs;
}

// Masked values change no estimator's advantages at unmasked tokens, nor do masked
// rewards the token-level estimators'. The outcome estimators score a row by its rewards
// summed unmasked, as verl's do: moving reward between a row's tokens, masked or not,
// changes nothing.
TEST(ComputeAdvantages, MaskedTokensChangeOnlyWhatVerlsSumsCount) {
  RandomBatch batch;
  batch.mask = at::rand({12, 6}) > 0.3;
  batch.mask.select(1, 0).fill_(true);
  AdvantageInputs inputs = InputsOf(batch);
  const at::Tensor masked = batch.mask.logical_not();
  AdvantageInputs masked_values = inputs;
  masked_values.values = at::where(masked, at::randn({12, 6}, at::kDouble) * 100, inputs.values);
  AdvantageInputs masked_rewards = inputs;
  masked_rewards.token_level_rewards =
      at::where(masked, at::randn({12, 6}, at::kDouble) * 100, inputs.token_level_rewards);
  AdvantageInputs moved_rewards = inputs;
  const at::Tensor noise = at::randn({12, 6}, at::kDouble) * 100;
  moved_rewards.token_level_rewards =
      noise - noise.mean(-1, /*keepdim=*/true) + inputs.token_level_rewards.mean(-1, /*keepdim=*/true);
  AdvantageOptions options;
  options.gamma = 0.9;
  options.lam = 0.7;
  auto same_where_unmasked = [&](const std::string& name, const AdvantageInputs& other, double tolerance) {
    const at::Tensor a = ComputeAdvantages(name, inputs, options).value().advantages;
    const at::Tensor b = ComputeAdvantages(name, other, options).value().advantages;
    return at::allclose(a.masked_select(batch.mask), b.masked_select(batch.mask), tolerance, tolerance);
  };
  for (const std::string& name : AdvantageEstimatorNames()) {
    EXPECT_TRUE(same_where_unmasked(name, masked_values, 1e-12)) << name;
    const bool token_level = name == "gae" || name == "reinforce_plus_plus" || name == "remax" ||
                             name == "optimal_token_baseline" || name == "tir_optimal_token_baseline";
    if (token_level) {
      EXPECT_TRUE(same_where_unmasked(name, masked_rewards, 1e-12)) << name;
    } else {
      EXPECT_TRUE(same_where_unmasked(name, moved_rewards, 1e-9)) << name;
      EXPECT_FALSE(same_where_unmasked(name, masked_rewards, 1e-9)) << name;
    }
  }
}

TEST(ComputeAdvantages, DispatchesByVerlName) {
  RandomBatch batch;
  AdvantageInputs inputs = InputsOf(batch);
  AdvantageOptions options;
  options.gamma = 0.8;
  options.lam = 0.6;
  options.norm_adv_by_std_in_grpo = false;
  auto same = [](const absl::StatusOr<Advantages>& a, const Advantages& b) {
    return a.ok() && at::equal(a->advantages, b.advantages) && at::equal(a->returns, b.returns);
  };
  const at::Tensor& r = batch.rewards;
  const at::Tensor& m = batch.mask;
  EXPECT_TRUE(same(ComputeAdvantages("gae", inputs, options),
                   GaeAdvantages(r, batch.values, m, 0.8, 0.6).value()));
  EXPECT_TRUE(same(ComputeAdvantages("grpo", inputs, options),
                   GrpoAdvantages(r, m, batch.index, false).value()));
  EXPECT_TRUE(same(ComputeAdvantages("rloo", inputs, options),
                   RlooAdvantages(r, m, batch.index).value()));
  EXPECT_TRUE(same(ComputeAdvantages("reinforce_plus_plus", inputs, options),
                   ReinforcePlusPlusAdvantages(r, m, 0.8).value()));
  EXPECT_TRUE(same(ComputeAdvantages("reinforce_plus_plus_baseline", inputs, options),
                   ReinforcePlusPlusBaselineAdvantages(r, m, batch.index).value()));
  EXPECT_TRUE(same(ComputeAdvantages("remax", inputs, options),
                   RemaxAdvantages(r, inputs.reward_baselines, m).value()));
  EXPECT_TRUE(same(ComputeAdvantages("gpg", inputs, options), GpgAdvantages(r, m, batch.index).value()));
  EXPECT_TRUE(same(ComputeAdvantages("opo", inputs, options), OpoAdvantages(r, m, batch.index).value()));
  EXPECT_TRUE(same(ComputeAdvantages("grpo_passk", inputs, options),
                   GrpoPassKAdvantages(r, m, batch.index, false).value()));
  EXPECT_TRUE(same(ComputeAdvantages("grpo_vectorized", inputs, options),
                   GrpoVectorizedAdvantages(r, m, batch.index, false).value()));
  EXPECT_TRUE(same(ComputeAdvantages("rloo_vectorized", inputs, options),
                   RlooVectorizedAdvantages(r, m, batch.index).value()));
  EXPECT_TRUE(same(ComputeAdvantages("optimal_token_baseline", inputs, options),
                   OptimalTokenBaselineAdvantages(r, m, batch.index, inputs.old_log_probs, inputs.sum_pi_squared,
                                                  at::Tensor())
                       .value()));
  inputs.rollout_is_weights = at::rand({12, 6}, at::kDouble);
  EXPECT_TRUE(same(ComputeAdvantages("tir_optimal_token_baseline", inputs, options),
                   TirOptimalTokenBaselineAdvantages(r, m, batch.index, inputs.old_log_probs, inputs.sum_pi_squared,
                                                     inputs.rollout_is_weights)
                       .value()));
}

TEST(ComputeAdvantages, UnknownNameListsTheValidOnes) {
  absl::StatusOr<Advantages> result =
      ComputeAdvantages("gaee", InputsOf(RandomBatch()), AdvantageOptions());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message(),
            "unknown adv_estimator 'gaee'; valid: gae, grpo, rloo, reinforce_plus_plus, "
            "reinforce_plus_plus_baseline, remax, gpg, opo, grpo_passk, grpo_vectorized, rloo_vectorized, "
            "optimal_token_baseline, tir_optimal_token_baseline");
}

TEST(ComputeAdvantages, MissingInputIsNamed) {
  AdvantageInputs inputs = InputsOf(RandomBatch());
  inputs.index = at::Tensor();
  absl::Status grpo = ComputeAdvantages("grpo", inputs, AdvantageOptions()).status();
  EXPECT_EQ(grpo.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(grpo, "grpo: index is missing")) << grpo;
  inputs.values = at::Tensor();
  EXPECT_TRUE(Mentions(ComputeAdvantages("gae", inputs, AdvantageOptions()).status(),
                       "gae: values is missing"));
  inputs.reward_baselines = at::Tensor();
  EXPECT_TRUE(Mentions(ComputeAdvantages("remax", inputs, AdvantageOptions()).status(),
                       "remax: reward_baselines is missing"));
}

TEST(ComputeAdvantages, NonFiniteInputsAreReported) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  AdvantageInputs inputs = InputsOf(RandomBatch());
  AdvantageInputs bad = inputs;
  bad.token_level_rewards = inputs.token_level_rewards.clone();
  bad.token_level_rewards[2][3] = nan;
  for (const std::string& name : AdvantageEstimatorNames()) {
    absl::Status status = ComputeAdvantages(name, bad, AdvantageOptions()).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_TRUE(Mentions(status, "token_level_rewards: 1 NaN")) << status;
  }
  bad = inputs;
  bad.values = inputs.values.clone();
  bad.values[0][0] = inf;
  EXPECT_TRUE(Mentions(ComputeAdvantages("gae", bad, AdvantageOptions()).status(),
                       "values: 0 NaN and 1 infinite"));
  bad = inputs;
  bad.reward_baselines = inputs.reward_baselines.clone();
  bad.reward_baselines[5] = nan;
  EXPECT_TRUE(Mentions(ComputeAdvantages("remax", bad, AdvantageOptions()).status(),
                       "reward_baselines: 1 NaN"));
  bad = inputs;
  bad.response_mask = inputs.response_mask.to(at::kFloat);
  bad.response_mask[1][1] = nan;
  EXPECT_TRUE(Mentions(ComputeAdvantages("grpo", bad, AdvantageOptions()).status(),
                       "response_mask: 1 NaN"));
}

TEST(ComputeAdvantages, ShapeAndDtypeErrorsNameTheArgument) {
  AdvantageInputs inputs = InputsOf(RandomBatch());
  struct Case {
    std::string estimator;
    AdvantageInputs inputs;
    std::string message;
  };
  std::vector<Case> cases;
  cases.push_back({"grpo", inputs, "response_mask must be [12, 6]"});
  cases.back().inputs.response_mask = at::ones({12, 5});
  cases.push_back({"gae", inputs, "values must be [12, 6]"});
  cases.back().inputs.values = at::ones({6, 12});
  cases.push_back({"gae", inputs, "values must be floating"});
  cases.back().inputs.values = at::ones({12, 6}, at::kLong);
  cases.push_back({"rloo", inputs, "index must be int64"});
  cases.back().inputs.index = at::zeros({12}, at::kInt);
  cases.push_back({"reinforce_plus_plus_baseline", inputs, "index must be [12]"});
  cases.back().inputs.index = at::zeros({11}, at::kLong);
  cases.push_back({"remax", inputs, "reward_baselines must be [12]"});
  cases.back().inputs.reward_baselines = at::zeros({12, 1});
  cases.push_back({"reinforce_plus_plus", inputs, "token_level_rewards must be [B, T] floating"});
  cases.back().inputs.token_level_rewards = at::zeros({12}, at::kDouble);
  for (const Case& c : cases) {
    absl::Status status = ComputeAdvantages(c.estimator, c.inputs, AdvantageOptions()).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_TRUE(Mentions(status, c.message)) << status << " lacks " << c.message;
  }
}

TEST(ComputeAdvantages, KeepsTheRewardsDtype) {
  RandomBatch batch;
  AdvantageInputs inputs = InputsOf(batch);
  inputs.token_level_rewards = batch.rewards.to(at::kFloat);
  for (const std::string& name : AdvantageEstimatorNames()) {
    Advantages out = ComputeAdvantages(name, inputs, AdvantageOptions()).value();
    EXPECT_EQ(out.advantages.scalar_type(), at::kFloat) << name;
    EXPECT_EQ(out.returns.scalar_type(), at::kFloat) << name;
  }
}

}  // namespace
}  // namespace rollout::algorithms
