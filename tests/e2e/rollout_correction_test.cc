// algorithm.rollout_correction (importance weights, rejection sampling, the veto) end
// to end on the CPU through real worker processes: grpo_arith on LetterRows (the example plug-in's scores vary, so the
// policy-gradient loss is not 0) with the tiny Qwen2 fixture in float32, where the
// rollout's log-probs and the actor's agree to rounding, so every ratio is ~1.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using testing::ReadJsonLines;
using testing::RolloutIn;
using ::testing::HasSubstr;

std::vector<std::string> OneStep(const std::string& name, std::vector<std::string> overrides) {
  const std::string source = ROLLOUT_SOURCE_DIR;
  std::vector<std::string> args = {
      "train", source + "/recipes/grpo_arith.yaml", "data.train_files=[data/letters.jsonl]", "data.val_files=[]",
      "actor.model.path=" + source + "/tests/data/tiny-qwen2", "trainer.device=cpu",
      "trainer.total_training_steps=1", "trainer.logger=[jsonl]", "trainer.experiment_name=" + name,
      "reward.name=null", "reward.plugin=" EXAMPLE_PLUGIN_PATH, "data.train_batch_size=4",
      "actor.ppo_mini_batch_size=4", "actor.ppo_micro_batch_size_per_gpu=8", "rollout.n=4",
      "rollout.cpu_kv_cache_gib=0.05", "data.max_response_length=8"};
  args.insert(args.end(), overrides.begin(), overrides.end());
  return args;
}

// The metrics of OneStep(name, overrides) run in `dir` (null when it failed).
nlohmann::json TrainedStep(const testing::TempDir& dir, const std::string& name, std::vector<std::string> overrides) {
  const testing::CommandResult run = RolloutIn(dir.path(), OneStep(name, std::move(overrides)));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  const auto steps = ReadJsonLines(dir.Path("jsonl_log/rollout_demo/" + name + "/metrics.jsonl"));
  EXPECT_EQ(steps.size(), 1u);
  return steps.empty() ? nlohmann::json() : steps[0];
}

TEST(RolloutCorrection, TokenWeightsTruncatedAtTheThresholdScaleThePolicyGradient) {
  testing::TempDir dir("rollout_correction");
  dir.Write("data/letters.jsonl", testing::LetterRows());
  auto train = [&](const std::string& name, std::vector<std::string> overrides) {
    return TrainedStep(dir, name, std::move(overrides));
  };
  const nlohmann::json plain = train("plain", {});
  // A threshold below every ratio (~1) truncates every weight to it: the policy
  // gradient, taken before the optimizer step (one mini-batch), halves. (The KL loss
  // adds none at the first step, where the actor is the reference, and the entropy
  // bonus is off. The loss itself is ~0: GRPO's advantages of equal-length responses
  // cancel at ratio 1.)
  const nlohmann::json halved = train("halved", {"algorithm.rollout_correction.rollout_is=token",
                                                 "algorithm.rollout_correction.rollout_is_threshold=0.5"});
  ASSERT_TRUE(plain.contains("actor/grad_norm") && halved.contains("actor/grad_norm"));
  const double plain_norm = plain["actor/grad_norm"].get<double>();
  ASSERT_GT(plain_norm, 1e-2) << plain.dump();
  EXPECT_NEAR(halved["actor/grad_norm"].get<double>(), 0.5 * plain_norm, 1e-4 * plain_norm) << halved.dump();
  EXPECT_FALSE(plain.contains("rollout_corr/rollout_is_mean"));
  EXPECT_NEAR(halved["rollout_corr/rollout_is_mean"].get<double>(), 0.5, 1e-6);
  EXPECT_NEAR(halved["rollout_corr/rollout_is_ratio_fraction_high"].get<double>(), 1.0, 1e-6);
  EXPECT_NEAR(halved["rollout_corr/rollout_is_max"].get<double>(), 1.0, 1e-4);
  EXPECT_NEAR(halved["rollout_corr/rollout_is_min"].get<double>(), 1.0, 1e-4);
  EXPECT_NEAR(halved["rollout_corr/kl"].get<double>(), 0.0, 1e-5);
  EXPECT_NEAR(halved["rollout_corr/k3_kl"].get<double>(), 0.0, 1e-8);
  // (The weights need every row's old log-probs: with one mini-batch the plain run
  // leaves them to the update, and a NaN row would have failed this one.)

  // Normalised to average 1, the same weights of 0.5 become 1: the plain gradient.
  const nlohmann::json normalised = train("normalised", {"algorithm.rollout_correction.rollout_is=token",
                                                         "algorithm.rollout_correction.rollout_is_threshold=0.5",
                                                         "algorithm.rollout_correction.rollout_is_batch_normalize=true"});
  EXPECT_NEAR(normalised["rollout_corr/rollout_is_mean"].get<double>(), 1.0, 1e-6);
  EXPECT_NEAR(normalised["actor/grad_norm"].get<double>(), plain_norm, 1e-4 * plain_norm);

  // Sequence level at the default threshold 2: the products of ~1 ratios are ~1.
  const nlohmann::json sequence = train("sequence", {"algorithm.rollout_correction.rollout_is=sequence"});
  EXPECT_NEAR(sequence["rollout_corr/rollout_is_mean"].get<double>(), 1.0, 1e-4);
  EXPECT_NEAR(sequence["actor/grad_norm"].get<double>(), plain_norm, 1e-4 * plain_norm);
}

TEST(RolloutCorrection, RejectedTokensLeaveTheLossAndTheVetoDropsWholeResponses) {
  testing::TempDir dir("rollout_rejection");
  dir.Write("data/letters.jsonl", testing::LetterRows());
  auto train = [&](const std::string& name, std::vector<std::string> overrides) {
    return TrainedStep(dir, name, std::move(overrides));
  };
  const nlohmann::json plain = train("plain", {});
  const double plain_norm = plain["actor/grad_norm"].get<double>();
  ASSERT_GT(plain_norm, 1e-2);
  // verl's geometric preset bounds, [0.999, 1.001]: ratios ~1 all pass.
  const nlohmann::json kept = train("kept", {"algorithm.rollout_correction.rollout_rs=geometric",
                                             "algorithm.rollout_correction.rollout_rs_threshold=1.001",
                                             "algorithm.rollout_correction.rollout_rs_threshold_lower=0.999"});
  EXPECT_EQ(kept["rollout_corr/rollout_rs_masked_fraction"], 0.0);
  EXPECT_NEAR(kept["actor/grad_norm"].get<double>(), plain_norm, 1e-4 * plain_norm);
  // Bounds that every ratio (~1) misses reject every token: no gradient, the response
  // lengths (from the attention mask) those of the same rollout unrejected.
  const nlohmann::json rejected = train("rejected", {"algorithm.rollout_correction.rollout_rs=token",
                                                     "algorithm.rollout_correction.rollout_rs_threshold=0.9",
                                                     "algorithm.rollout_correction.rollout_rs_threshold_lower=0.5"});
  EXPECT_NEAR(rejected["rollout_corr/rollout_rs_masked_fraction"].get<double>(), 1.0, 1e-6);
  EXPECT_NEAR(rejected["rollout_corr/rollout_rs_seq_masked_fraction"].get<double>(), 1.0, 1e-6);
  EXPECT_EQ(rejected["actor/grad_norm"], 0.0);
  EXPECT_EQ(rejected["response_length/mean"], plain["response_length/mean"]);
  // A veto above every ratio vetoes every response.
  const nlohmann::json vetoed = train("vetoed", {"algorithm.rollout_correction.rollout_token_veto_threshold=1.5"});
  EXPECT_NEAR(vetoed["rollout_corr/rollout_is_veto_fraction"].get<double>(), 1.0, 1e-6);
  EXPECT_NEAR(vetoed["rollout_corr/rollout_is_catastrophic_token_fraction"].get<double>(), 1.0, 1e-6);
  EXPECT_EQ(vetoed["actor/grad_norm"], 0.0);
}

TEST(RolloutCorrection, WithBypassModeItIsAClearError) {
  testing::TempDir dir("rollout_correction_bypass");
  dir.Write("data/letters.jsonl", testing::LetterRows());
  const testing::CommandResult run =
      RolloutIn(dir.path(), OneStep("bypass", {"algorithm.rollout_correction.rollout_is=token",
                                               "algorithm.rollout_correction.bypass_mode=true"}));
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.output, HasSubstr("with bypass_mode: the rollout's log-probs already anchor the ratio"));
}

TEST(RolloutCorrection, EmptyRejectionBoundsAreAClearError) {
  testing::TempDir dir("rollout_correction_bounds");
  dir.Write("data/letters.jsonl", testing::LetterRows());
  const testing::CommandResult run = RolloutIn(dir.path(), OneStep("bounds", {"algorithm.rollout_correction.rollout_rs=token",
                                                                              "algorithm.rollout_correction.rollout_rs_threshold=0.8"}));
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.output, HasSubstr("rejection sampling keeps ratios in [rollout_rs_threshold_lower, "
                                    "rollout_rs_threshold] = [1.25, 0.8], which is empty"));
}

// use_policy_gradient: REINFORCE on the rollout's log-probs. Its gradient -A equals PPO's
// at ratio 1 (the on-policy update of one mini-batch), and weights truncated at 0.5 from
// the current policy's ratio to the rollout's (~1) halve it.
TEST(RolloutCorrection, ThePolicyGradientModeWeighsReinforceByTheCurrentPolicysRatio) {
  testing::TempDir dir("rollout_correction_pg");
  dir.Write("data/letters.jsonl", testing::LetterRows());
  const nlohmann::json plain = TrainedStep(dir, "plain", {});
  const std::vector<std::string> pg = {"algorithm.rollout_correction.bypass_mode=true",
                                       "algorithm.rollout_correction.use_policy_gradient=true"};
  const nlohmann::json reinforce = TrainedStep(dir, "reinforce", pg);
  std::vector<std::string> weighted = pg;
  weighted.insert(weighted.end(), {"algorithm.rollout_correction.rollout_is=token",
                                   "algorithm.rollout_correction.rollout_is_threshold=0.5"});
  const nlohmann::json halved = TrainedStep(dir, "halved", weighted);
  ASSERT_TRUE(plain.contains("actor/grad_norm") && reinforce.contains("actor/grad_norm") &&
              halved.contains("actor/grad_norm"));
  const double plain_norm = plain["actor/grad_norm"].get<double>();
  ASSERT_GT(plain_norm, 1e-2) << plain.dump();
  EXPECT_NEAR(reinforce["actor/grad_norm"].get<double>(), plain_norm, 1e-4 * plain_norm) << reinforce.dump();
  EXPECT_FALSE(reinforce.contains("rollout_corr/rollout_is_mean"));
  EXPECT_NEAR(halved["actor/grad_norm"].get<double>(), 0.5 * plain_norm, 1e-4 * plain_norm) << halved.dump();
  EXPECT_NEAR(halved["rollout_corr/rollout_is_mean"].get<double>(), 0.5, 1e-6);
  EXPECT_NEAR(halved["rollout_corr/kl"].get<double>(), 0.0, 1e-5);

  const testing::CommandResult unanchored =
      RolloutIn(dir.path(), OneStep("unanchored", {"algorithm.rollout_correction.use_policy_gradient=true"}));
  EXPECT_NE(unanchored.exit_code, 0);
  EXPECT_THAT(unanchored.output, HasSubstr("use_policy_gradient needs bypass_mode=true"));
}

}  // namespace
}  // namespace rollout
