// `rollout train recipes/ppo_arith_tiny.yaml` end to end on the CPU through real worker
// processes, at reduced size: PPO with a critic (GAE, KL in the reward) for three steps,
// the critic colocated with the policy roles or in a pool of its own (and both give the
// same run), its passes by rows or by tokens, verl's critic metrics, and the critic
// warmup holding the actor back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"

namespace rollout {
namespace {

using testing::ReadJsonLines;
using testing::RolloutIn;

using ::testing::HasSubstr;

const char* const kMetricsFile = "jsonl_log/rollout_demo/ppo_arith/metrics.jsonl";

// The recipe at reduced size: 4 prompts x 2 responses per step, one critic-only step.
std::vector<std::string> ReducedRun(const std::vector<std::string>& extra) {
  const std::string source = ROLLOUT_SOURCE_DIR;
  std::vector<std::string> args = {
      "train", source + "/recipes/ppo_arith_tiny.yaml", "data.train_files=[data/train.jsonl]",
      "data.val_files=[data/val.jsonl]", "actor.model.path=" + source + "/tests/data/tiny-qwen2",
      "trainer.total_training_steps=3", "trainer.val_before_train=false", "trainer.critic_warmup=1",
      "data.train_batch_size=4", "rollout.n=2", "actor.ppo_mini_batch_size=2", "critic.ppo_mini_batch_size=2",
      "actor.ppo_micro_batch_size_per_gpu=2", "critic.ppo_micro_batch_size_per_gpu=2",
      "rollout.cpu_kv_cache_gib=0.05", "critic.optim.lr=1e-3"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// One run's output and per-step metrics (steps 1..3).
struct PpoRun {
  testing::CommandResult result;
  std::vector<nlohmann::json> steps;
};

PpoRun RunIn(testing::TempDir& dir, const std::vector<std::string>& extra) {
  const testing::CommandResult data =
      RolloutIn(dir.path(), {"gen-data", "arithmetic", "--out", "data", "--train", "32", "--val", "4"});
  EXPECT_EQ(data.exit_code, 0) << data.output;
  PpoRun run;
  run.result = RolloutIn(dir.path(), ReducedRun(extra));
  run.steps = ReadJsonLines(dir.Path(kMetricsFile));
  return run;
}

bool IsFinite(const nlohmann::json& metrics, const char* name) {
  return metrics.contains(name) && metrics[name].is_number() && std::isfinite(metrics[name].get<double>());
}

// The critic's metrics of two runs that compute the same things, to float32 rounding.
void ExpectTheSameCritic(const std::vector<nlohmann::json>& want, const std::vector<nlohmann::json>& got,
                         size_t steps) {
  ASSERT_GE(want.size(), steps);
  ASSERT_GE(got.size(), steps);
  for (size_t i = 0; i < steps; ++i) {
    EXPECT_EQ(got[i]["critic/score/mean"], want[i]["critic/score/mean"]) << "step " << i + 1;
    EXPECT_EQ(got[i]["response_length/mean"], want[i]["response_length/mean"]) << "step " << i + 1;
    for (const char* name : {"critic/values/mean", "critic/vf_loss", "critic/returns/mean"}) {
      ASSERT_TRUE(IsFinite(got[i], name)) << "step " << i + 1 << ": " << name;
      const double expected = want[i][name].get<double>();
      EXPECT_NEAR(got[i][name].get<double>(), expected, 1e-4 * (1 + std::abs(expected)))
          << "step " << i + 1 << ": " << name;
    }
  }
}

class PpoTrain : public ::testing::Test {
 protected:
  // The colocated run, shared by the tests that read it.
  static void SetUpTestSuite() {
    colocated_dir_ = new testing::TempDir("ppo_e2e");
    colocated_ = new PpoRun(RunIn(*colocated_dir_, {}));
  }
  static void TearDownTestSuite() {
    delete colocated_;
    delete colocated_dir_;
  }

  static testing::TempDir* colocated_dir_;
  static PpoRun* colocated_;
};

testing::TempDir* PpoTrain::colocated_dir_ = nullptr;
PpoRun* PpoTrain::colocated_ = nullptr;

TEST_F(PpoTrain, ColocatedCriticLogsVerlsCriticMetrics) {
  ASSERT_EQ(colocated_->result.exit_code, 0) << colocated_->result.output;
  EXPECT_THAT(colocated_->result.output, HasSubstr("placement: 1 worker process(es)"));
  EXPECT_THAT(colocated_->result.output, HasSubstr("roles actor+critic+ref+rollout"));
  EXPECT_THAT(colocated_->result.output, HasSubstr("step 3/3"));
  EXPECT_THAT(colocated_->result.output, HasSubstr("vf_loss "));  // on the console's step line
  const std::vector<nlohmann::json>& steps = colocated_->steps;
  ASSERT_EQ(steps.size(), 3u);
  for (const nlohmann::json& metrics : steps) {
    for (const char* name : {"critic/vf_loss", "critic/vf_clipfrac", "critic/vpred_mean", "critic/grad_norm",
                             "critic/lr", "critic/values/mean", "critic/vf_explained_var", "critic/returns/mean",
                             "critic/advantages/mean", "critic/score/mean", "actor/reward_kl_penalty",
                             "timing_s/values", "timing_s/update_critic", "timing_s/ref", "timing_s/adv"}) {
      EXPECT_TRUE(IsFinite(metrics, name)) << "step " << metrics["step"] << ": " << name << " in " << metrics.dump();
    }
    EXPECT_EQ(metrics["critic/lr"], 1e-3);
  }
  // The critic learns from each step's batch: its loss is not a constant.
  EXPECT_TRUE(steps[0]["critic/vf_loss"] != steps[1]["critic/vf_loss"] ||
              steps[1]["critic/vf_loss"] != steps[2]["critic/vf_loss"]);
  EXPECT_TRUE(steps[2].contains("val-core/arithmetic/reward/mean@1"));  // after the last step
}

TEST_F(PpoTrain, TheActorWaitsForTheCriticWarmup) {
  ASSERT_EQ(colocated_->steps.size(), 3u) << colocated_->result.output;
  const nlohmann::json& warmup = colocated_->steps[0];
  EXPECT_EQ(warmup["step"], 1);
  for (const char* name : {"actor/pg_loss", "actor/grad_norm", "actor/lr", "timing_s/update_actor"}) {
    EXPECT_FALSE(warmup.contains(name)) << "critic_warmup=1, yet step 1 has " << name;
  }
  for (size_t i = 1; i < 3; ++i) {
    for (const char* name : {"actor/pg_loss", "actor/grad_norm", "timing_s/update_actor"}) {
      EXPECT_TRUE(IsFinite(colocated_->steps[i], name)) << "step " << i + 1 << " lacks " << name;
    }
  }
}

TEST_F(PpoTrain, ACriticInItsOwnPoolTrainsAsTheColocatedOne) {
  ASSERT_EQ(colocated_->steps.size(), 3u) << colocated_->result.output;
  testing::TempDir dir("ppo_e2e_pools");
  const PpoRun separate =
      RunIn(dir, {"resource_pools.policy.device=cpu", "resource_pools.critic.device=cpu", "placement.actor=policy",
                  "placement.rollout=policy", "placement.ref=policy", "placement.critic=critic"});
  ASSERT_EQ(separate.result.exit_code, 0) << separate.result.output;
  EXPECT_THAT(separate.result.output, HasSubstr("placement: 2 worker process(es)"));
  EXPECT_THAT(separate.result.output, HasSubstr("pool critic: 1 node(s) x 1 cpu, roles critic"));
  ASSERT_EQ(separate.steps.size(), 3u);
  // Same seeds, same computations, other processes: the same run.
  ExpectTheSameCritic(colocated_->steps, separate.steps, 3);
  EXPECT_FALSE(separate.steps[0].contains("actor/pg_loss"));
  EXPECT_TRUE(separate.steps[1].contains("actor/pg_loss"));
}

// verl's critic.use_dynamic_bsz: the critic's values and update by tokens compute what
// they compute by rows. The update's budget holds a whole mini-batch (2 prompts x 2
// responses of at most 24 tokens), as micro-batches of 4 rows do: a token-mean loss
// depends on how rows group. The values' budget (two rows' worth) groups them otherwise,
// which without gradients only rounds differently. Steps 1-2 are compared: from step 3
// on the actor's rollouts follow the rounding.
TEST(PpoTrainRecipe, TheCriticByTokensTrainsAsByRows) {
  testing::TempDir rows_dir("ppo_e2e_critic_rows");
  const PpoRun rows = RunIn(rows_dir, {"critic.ppo_micro_batch_size_per_gpu=4"});
  ASSERT_EQ(rows.result.exit_code, 0) << rows.result.output;
  testing::TempDir tokens_dir("ppo_e2e_critic_tokens");
  const PpoRun tokens = RunIn(tokens_dir, {"critic.use_dynamic_bsz=true", "critic.ppo_max_token_len_per_gpu=96",
                                           "critic.forward_max_token_len_per_gpu=48"});
  ASSERT_EQ(tokens.result.exit_code, 0) << tokens.result.output;
  ASSERT_EQ(tokens.steps.size(), 3u);
  ExpectTheSameCritic(rows.steps, tokens.steps, 2);

  testing::TempDir small_dir("ppo_e2e_critic_small_budget");
  const PpoRun small = RunIn(small_dir, {"critic.use_dynamic_bsz=true", "critic.forward_max_token_len_per_gpu=23"});
  EXPECT_NE(small.result.exit_code, 0);
  EXPECT_THAT(small.result.output, HasSubstr("critic.forward_max_token_len_per_gpu (23) must be at least "
                                             "data.max_prompt_length + data.max_response_length (24)"));
}

// verl's PF-PPO (pow, weight_pow 2) on rewards of 1 or 0: rows scoring 0 weigh 1e-8, so
// each step's redrawn batch, which the data metrics describe, holds only rows of one
// score — 1 wherever any response scored. With the actor's and critic's rows shuffled
// over two epochs, a run that the first mini-batch's old log-probs cannot shortcut.
TEST(PpoTrainRecipe, PfPpoRedrawsTheBatchFromItsBestScoringRows) {
  testing::TempDir dir("ppo_e2e_pf_ppo");
  dir.Write("data/letters.jsonl", testing::LetterRows());
  const testing::CommandResult result = RolloutIn(
      dir.path(), ReducedRun({"data.train_files=[data/letters.jsonl]", "data.val_files=[]", "reward.name=null",
                              std::string("reward.plugin=") + MISBEHAVING_PLUGIN_PATH,
                              "algorithm.use_pf_ppo=true", "actor.shuffle=true", "critic.shuffle=true",
                              "actor.ppo_epochs=2", "critic.ppo_epochs=2"}));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const std::vector<nlohmann::json> steps = ReadJsonLines(dir.Path(kMetricsFile));
  ASSERT_EQ(steps.size(), 3u);
  int scoring_steps = 0;
  for (const nlohmann::json& metrics : steps) {
    EXPECT_EQ(metrics["critic/score/min"], metrics["critic/score/max"]) << metrics.dump();
    scoring_steps += metrics["critic/score/max"] == 1.0;
  }
  EXPECT_GT(scoring_steps, 0);
  EXPECT_TRUE(IsFinite(steps[2], "actor/pg_loss"));

  const PpoRun grpo = RunIn(dir, {"algorithm.adv_estimator=grpo", "algorithm.use_pf_ppo=true"});
  EXPECT_NE(grpo.result.exit_code, 0);
  EXPECT_THAT(grpo.result.output, HasSubstr("algorithm.use_pf_ppo resamples the batch"));
}

TEST(PpoTrainRecipe, ACriticWithoutGaeIsRefused) {
  testing::TempDir dir("ppo_e2e_grpo_critic");
  const PpoRun run = RunIn(dir, {"algorithm.adv_estimator=grpo", "placement.critic=global_pool"});
  EXPECT_NE(run.result.exit_code, 0);
  EXPECT_THAT(run.result.output, HasSubstr("placement.critic puts a critic on pool 'global_pool', but "
                                           "algorithm.adv_estimator=grpo does not use one"));
}

}  // namespace
}  // namespace rollout
