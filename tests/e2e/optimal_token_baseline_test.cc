// verl's optimal token baseline end to end on the CPU, through a real worker process
// (grpo_arith, the tiny Qwen2 fixture, the misbehaving plug-in's letter rewards so that
// scores vary): the actor's old-log-prob pass returns sum_pi_squared, the estimator
// gives each response token its own baseline (from every row's sums: a row left to the
// update would hold NaN, which the estimator refuses), and the step logs verl's
// variance_proxy metrics; without actor.calculate_sum_pi_squared the recipe is refused.
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

using ::testing::HasSubstr;

TEST(OptimalTokenBaselineTrain, TrainsOnTheActorsSumPiSquaredAndLogsVarianceProxies) {
  testing::TempDir dir("optimal_token_baseline");
  dir.Write("data/train.jsonl", testing::LetterRows());
  dir.Write("data/val.jsonl", testing::LetterRows());
  const std::vector<std::string> sizes = {
      "algorithm.adv_estimator=optimal_token_baseline", "trainer.val_before_train=false", "trainer.test_freq=-1",
      "data.train_batch_size=4", "actor.ppo_mini_batch_size=2", "actor.ppo_micro_batch_size_per_gpu=4",
      "rollout.n=4", "rollout.cpu_kv_cache_gib=0.05", "data.max_response_length=6", "reward.name=null",
      std::string("reward.plugin=") + MISBEHAVING_PLUGIN_PATH};

  const testing::CommandResult refused =
      testing::RunRecipeOnCpu(dir.path(), "grpo_arith.yaml", "data/train.jsonl", "data/val.jsonl", 1, sizes);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.output, HasSubstr("algorithm.adv_estimator=optimal_token_baseline needs each response "
                                        "token's sum_pi_squared from the actor: set "
                                        "actor.calculate_sum_pi_squared=true"));

  std::vector<std::string> with_sums = sizes;
  with_sums.push_back("actor.calculate_sum_pi_squared=true");
  const testing::CommandResult train =
      testing::RunRecipeOnCpu(dir.path(), "grpo_arith.yaml", "data/train.jsonl", "data/val.jsonl", 2, with_sums);
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const auto metrics = testing::StepMetrics(dir.path(), "grpo_arith");
  for (int step = 1; step <= 2; ++step) {
    const nlohmann::json& at = metrics.at(step);
    const double grad_norm = at["actor/grad_norm"].get<double>();
    EXPECT_NEAR(at["variance_proxy/proxy1_signal_strength"].get<double>(), grad_norm * grad_norm, 1e-9) << at.dump();
    EXPECT_GT(at["variance_proxy/expected_w"].get<double>(), 0) << at.dump();
    for (const char* name : {"variance_proxy/proxy2_total_power", "variance_proxy/proxy3_pure_noise",
                             "variance_proxy/expected_a_squared", "actor/pg_loss"}) {
      EXPECT_TRUE(std::isfinite(at[name].get<double>())) << name << " " << at.dump();
    }
  }
  // Some group's responses scored differently, so some tokens have advantages.
  EXPECT_GT(metrics.at(1)["variance_proxy/expected_a_squared"].get<double>() +
                metrics.at(2)["variance_proxy/expected_a_squared"].get<double>(),
            0)
      << metrics.at(1).dump() << metrics.at(2).dump();
}

}  // namespace
}  // namespace rollout
