// The controller's step arithmetic: scores at the last response token, GRPO advantages
// per uid group, the KL penalty in the reward, PF-PPO's resampling and verl's data
// metrics.
#include "controller/ppo_step.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "algorithms/kl_controller.h"

namespace rollout::controller {
namespace {

using ::testing::HasSubstr;

// Four responses of two prompts (uids a, a, b, b), response width 3, lengths 3, 1, 2, 3.
Batch StepBatch() {
  Batch batch;
  const at::Tensor mask = at::tensor({1, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 1}, at::kLong).view({4, 3});
  EXPECT_TRUE(batch.AddTensor("response_mask", mask).ok());
  EXPECT_TRUE(batch.AddTensor("token_level_scores", TokenLevelScores({1, 0, 0.5, 0.5}, mask).value()).ok());
  EXPECT_TRUE(batch.AddStrings("uid", {"a", "a", "b", "b"}).ok());
  EXPECT_TRUE(batch.AddTensor("prompts", at::ones({4, 2}, at::kLong)).ok());
  EXPECT_TRUE(batch.AddTensor("attention_mask", at::cat({at::tensor({1, 1, 0, 1, 1, 1, 1, 1}, at::kLong).view({4, 2}), mask}, 1)).ok());
  return batch;
}

// Row 1 has no response token (a sample over-sampling aborted): its score goes in the
// last column, where verl's index valid_response_length - 1 = -1 puts it.
TEST(TokenLevelScores, PutsEachScoreOnTheLastResponseToken) {
  const at::Tensor mask = at::tensor({1, 1, 0, 0, 0, 0}, at::kLong).view({2, 3});
  const at::Tensor scores = TokenLevelScores({2.5, -1}, mask).value();
  EXPECT_TRUE(at::equal(scores, at::tensor({0.0f, 2.5f, 0.0f, 0.0f, 0.0f, -1.0f}).view({2, 3})));
  EXPECT_EQ(TokenLevelScores({}, at::zeros({0, 3}, at::kLong)).value().numel(), 0);
  EXPECT_EQ(TokenLevelScores({4}, at::zeros({1, 0}, at::kLong)).value().numel(), 0);
  EXPECT_THAT(TokenLevelScores({1}, mask).status().message(), HasSubstr("1 reward scores for 2 responses"));
}

// A multi-turn response: a reply, a tool turn (not counted), the last reply, padding.
TEST(TokenLevelScores, PutsAMultiTurnResponsesScoreOnItsLastReplysLastToken) {
  const at::Tensor mask = at::tensor({1, 1, 0, 0, 1, 0}, at::kLong).view({1, 6});
  const at::Tensor scores = TokenLevelScores({3}, mask).value();
  EXPECT_TRUE(at::equal(scores, at::tensor({0.0f, 0.0f, 0.0f, 0.0f, 3.0f, 0.0f}).view({1, 6})));
}

// PF-PPO with max_min: the rows scoring 1 (uid a) and 0 (uid a) carry all the weight but
// 1e-8 each of the two 0.5 rows', so the redrawn batch is of those two rows only; the
// seed and step decide which, the same each time.
TEST(ResampleForPfPpo, RedrawsRowsByTheirScoresWeights) {
  config::AlgorithmConfig algorithm;
  algorithm.set_use_pf_ppo(true);
  algorithm.mutable_pf_ppo()->set_reweight_method("max_min");
  Batch batch = StepBatch();
  ASSERT_TRUE(ResampleForPfPpo(algorithm, 7, 3, &batch).ok());
  ASSERT_EQ(batch.size(), 4);
  const at::Tensor scores = batch.Tensor("token_level_scores").value().sum(-1);
  EXPECT_TRUE(scores.eq(0).logical_or(scores.eq(1)).all().item<bool>()) << scores;
  EXPECT_EQ(batch.Strings("uid").value(), std::vector<std::string>(4, "a"));
  Batch again = StepBatch();
  ASSERT_TRUE(ResampleForPfPpo(algorithm, 7, 3, &again).ok());
  EXPECT_TRUE(at::equal(again.Tensor("response_mask").value(), batch.Tensor("response_mask").value()));

  Batch unchanged = StepBatch();
  algorithm.set_use_pf_ppo(false);
  ASSERT_TRUE(ResampleForPfPpo(algorithm, 7, 3, &unchanged).ok());
  EXPECT_TRUE(at::equal(unchanged.Tensor("token_level_scores").value(), StepBatch().Tensor("token_level_scores").value()));
}

TEST(ComputeAdvantageColumns, GrpoNormalisesWithinEachUidGroup) {
  Batch batch = StepBatch();
  AdvantageStep step;
  const auto metrics = ComputeAdvantageColumns(step, &batch).value();
  EXPECT_TRUE(metrics.empty());
  const at::Tensor advantages = batch.Tensor("advantages").value();
  // Group a: scores 1 and 0 -> +-(0.5 / std) with std = sqrt(0.5); group b: equal -> 0.
  const double expected = 0.5 / (std::sqrt(0.5) + 1e-6);
  EXPECT_NEAR(advantages[0][0].item<double>(), expected, 1e-5);
  EXPECT_NEAR(advantages[1][0].item<double>(), -expected, 1e-5);
  EXPECT_EQ(advantages[1][1].item<double>(), 0);  // masked
  EXPECT_EQ(advantages[2].abs().sum().item<double>(), 0);
  EXPECT_TRUE(at::equal(batch.Tensor("token_level_rewards").value(), batch.Tensor("token_level_scores").value()));
}

TEST(ComputeAdvantageColumns, KlInRewardSubtractsThePenalty) {
  Batch batch = StepBatch();
  ASSERT_TRUE(batch.AddTensor("old_log_probs", at::full({4, 3}, -1.0)).ok());
  ASSERT_TRUE(batch.AddTensor("ref_log_prob", at::full({4, 3}, -1.5)).ok());
  auto controller = algorithms::MakeKlController(algorithms::KlControlOptions().set_kl_coef(0.1)).value();
  AdvantageStep step;
  step.use_kl_in_reward = true;
  step.kl_controller = controller.get();
  const auto metrics = ComputeAdvantageColumns(step, &batch).value();
  EXPECT_NEAR(metrics.at("actor/reward_kl_penalty"), 0.5, 1e-6);
  EXPECT_NEAR(metrics.at("actor/reward_kl_penalty_coeff"), 0.1, 1e-12);
  const at::Tensor rewards = batch.Tensor("token_level_rewards").value();
  EXPECT_NEAR(rewards[0][0].item<double>(), -0.05, 1e-6);      // 0 - 0.1 * 0.5
  EXPECT_NEAR(rewards[0][2].item<double>(), 1 - 0.05, 1e-6);   // the score token
  step.kl_controller = nullptr;
  Batch again = StepBatch();
  EXPECT_THAT(ComputeAdvantageColumns(step, &again).status().message(), HasSubstr("needs a KL controller"));
}

// The optimal token baseline reads the actor's old_log_probs and sum_pi_squared
// columns (and rollout_is_weights where the batch has them); variance proxies follow.
TEST(ComputeAdvantageColumns, OptimalTokenBaselineReadsTheActorsColumns) {
  Batch batch = StepBatch();
  AdvantageStep step;
  step.adv_estimator = "optimal_token_baseline";
  EXPECT_THAT(ComputeAdvantageColumns(step, &batch).status().message(),
              HasSubstr("optimal_token_baseline: old_log_probs is missing"));
  ASSERT_TRUE(batch.AddTensor("old_log_probs", at::full({4, 3}, std::log(0.5f))).ok());
  ASSERT_TRUE(batch.AddTensor("sum_pi_squared", at::full({4, 3}, 0.5f)).ok());
  ASSERT_TRUE(ComputeAdvantageColumns(step, &batch).ok());
  const at::Tensor mask = batch.Tensor("response_mask").value().to(at::kFloat);
  const at::Tensor scores = batch.Tensor("token_level_scores").value();
  const at::Tensor returns = scores.flip({-1}).cumsum(-1).flip({-1}) * mask;
  EXPECT_TRUE(at::equal(batch.Tensor("returns").value(), returns));
  // Group b (rows 2, 3; lengths 2 and 3, both scoring 0.5): at the first two positions
  // both have return 0.5 (baseline 0.5, advantage 0); row 3's third token is its zero tail.
  const at::Tensor advantages = batch.Tensor("advantages").value();
  EXPECT_NEAR(advantages[2].abs().sum().item<double>(), 0, 1e-6) << advantages;
  EXPECT_NEAR(advantages[3][0].item<double>(), 0, 1e-6) << advantages;
  EXPECT_NEAR(advantages[3][2].item<double>(), 0.5, 1e-6) << advantages;

  std::map<std::string, double> step_metrics = {{"actor/grad_norm", 0.1}};
  const auto proxies = VarianceProxyMetrics(batch, step_metrics).value();
  EXPECT_NEAR(proxies.at("variance_proxy/proxy1_signal_strength"), 0.01, 1e-9);
  EXPECT_EQ(proxies.size(), 5u);
  EXPECT_TRUE(VarianceProxyMetrics(StepBatch(), step_metrics).value().empty());
}

TEST(DataMetrics, ReportsVerlsScoreAndLengthStatistics) {
  Batch batch = StepBatch();
  ASSERT_TRUE(ComputeAdvantageColumns(AdvantageStep(), &batch).ok());
  const auto metrics = DataMetrics(batch).value();
  EXPECT_NEAR(metrics.at("critic/score/mean"), 0.5, 1e-6);
  EXPECT_EQ(metrics.at("critic/score/max"), 1);
  EXPECT_EQ(metrics.at("critic/score/min"), 0);
  EXPECT_NEAR(metrics.at("response_length/mean"), 2.25, 1e-9);
  EXPECT_EQ(metrics.at("response_length/max"), 3);
  EXPECT_NEAR(metrics.at("response_length/clip_ratio"), 0.5, 1e-9);  // two rows hit 3
  EXPECT_NEAR(metrics.at("prompt_length/mean"), 1.75, 1e-9);
  EXPECT_EQ(metrics.count("critic/values/mean"), 0u);
  EXPECT_EQ(metrics.count("num_turns/mean"), 0u);  // single-turn rollouts

  ASSERT_TRUE(batch.AddTensor("num_turns", at::tensor({2, 4, 2, 6}, at::kLong)).ok());
  const auto multi_turn = DataMetrics(batch).value();
  EXPECT_EQ(multi_turn.at("num_turns/min"), 2);
  EXPECT_EQ(multi_turn.at("num_turns/max"), 6);
  EXPECT_NEAR(multi_turn.at("num_turns/mean"), 3.5, 1e-12);
}

TEST(DataMetrics, GaeReturnsAndTheShareOfTheirVarianceTheValuesExplain) {
  Batch batch = StepBatch();
  // With gamma = lam = 1 each token's return is its row's score, whatever the values;
  // values at half the returns leave a quarter of the returns' variance unexplained.
  const at::Tensor mask = batch.Tensor("response_mask").value().to(at::kFloat);
  const at::Tensor row_scores = at::tensor({1.0f, 0.0f, 0.5f, 0.5f}).unsqueeze(1);
  ASSERT_TRUE(batch.AddTensor("values", 0.5 * row_scores * mask).ok());
  AdvantageStep step;
  step.adv_estimator = "gae";
  ASSERT_TRUE(ComputeAdvantageColumns(step, &batch).ok());
  EXPECT_TRUE(at::allclose(batch.Tensor("returns").value() * mask, row_scores * mask, 1e-5, 1e-6));
  const auto metrics = DataMetrics(batch).value();
  EXPECT_NEAR(metrics.at("critic/returns/mean"), 5.5 / 9, 1e-6);  // over the 9 response tokens
  EXPECT_NEAR(metrics.at("critic/values/mean"), 2.75 / 9, 1e-6);
  EXPECT_NEAR(metrics.at("critic/vf_explained_var"), 0.75, 1e-3);
}

}  // namespace
}  // namespace rollout::controller
