#include "controller/batch_splits.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rollout::controller {
namespace {

using ::testing::HasSubstr;

// The recipe `yaml` and the status of checking its batch splits against its placement.
absl::Status CheckYaml(const std::string& yaml) {
  absl::StatusOr<config::LoadedRecipe> recipe = config::ParseRecipeYaml(yaml, "test.yaml");
  EXPECT_TRUE(recipe.ok()) << recipe.status();
  absl::StatusOr<Placement> placement = ResolvePlacement(*recipe);
  EXPECT_TRUE(placement.ok()) << placement.status();
  return CheckPlacementBatching(recipe->recipe, *placement);
}

constexpr char kTwoCpuWorkers[] =
    "trainer: {device: cpu, n_gpus_per_node: 2}\nalgorithm: {adv_estimator: grpo}\n";

TEST(BatchSplits, WholeMiniBatchesOverTheWorkersPass) {
  EXPECT_TRUE(CheckYaml(std::string(kTwoCpuWorkers) +
                        "data: {train_batch_size: 8}\nactor: {ppo_mini_batch_size: 4}\n"
                        "rollout: {n: 1}\n")
                  .ok());
}

TEST(BatchSplits, ABatchThatDoesNotSplitOverTheWorkersNamesTheirCount) {
  const absl::Status status = CheckYaml(std::string(kTwoCpuWorkers) +
                                        "data: {train_batch_size: 7}\nactor: {ppo_mini_batch_size: 7}\n");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("data.train_batch_size (7) must split evenly over the 2 policy workers"));
}

// As verl's split, the last mini-batch takes the prompts left over (verl's Qwen3-1.7B
// GRPO example: 1,024 prompts in mini-batches of 80); a batch smaller than one
// mini-batch names the key.
TEST(BatchSplits, TheLastMiniBatchMayBeSmallerButNotTheOnlyOne) {
  const std::string workers = std::string(kTwoCpuWorkers) + "rollout: {n: 2}\n";
  EXPECT_TRUE(CheckYaml(workers + "data: {train_batch_size: 8}\nactor: {ppo_mini_batch_size: 3}\n").ok());
  const absl::Status status =
      CheckYaml(workers + "data: {train_batch_size: 8}\nactor: {ppo_mini_batch_size: 9}\n");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "data.train_batch_size (8) must be at least actor.ppo_mini_batch_size (9), as verl asserts");
}

TEST(BatchSplits, AMiniBatchsRowsMustSplitOverTheWorkers) {
  // 8 prompts in mini-batches of 1 prompt x 1 response: one row for two workers.
  const absl::Status status = CheckYaml(std::string(kTwoCpuWorkers) +
                                        "data: {train_batch_size: 8}\nactor: {ppo_mini_batch_size: 1}\n"
                                        "rollout: {n: 1}\n");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("actor.ppo_mini_batch_size x rollout.n = 1 rows do not split over the 2 policy workers"));
}

TEST(BatchSplits, TheCriticsMiniBatchIsCheckedWhereACriticIsPlaced) {
  const std::string gae =
      "trainer: {device: cpu}\nalgorithm: {adv_estimator: gae}\n"
      "data: {train_batch_size: 8}\nactor: {ppo_mini_batch_size: 4}\n";
  EXPECT_TRUE(CheckYaml(gae + "critic: {ppo_mini_batch_size: 8}\n").ok());
  const absl::Status status = CheckYaml(gae + "critic: {ppo_mini_batch_size: 9}\n");
  EXPECT_THAT(std::string(status.message()), HasSubstr("critic.ppo_mini_batch_size (9)"));
  // Unset, the critic's mini-batch is the actor's, as in verl (its Qwen2.5-0.5B PPO
  // example: 8 prompts, mini-batches of 8, no critic key).
  EXPECT_TRUE(CheckYaml("trainer: {device: cpu}\nalgorithm: {adv_estimator: gae}\n"
                        "data: {train_batch_size: 8}\nactor: {ppo_mini_batch_size: 8}\n")
                  .ok());
  // Without a critic (grpo), the critic's key is not checked.
  EXPECT_TRUE(CheckYaml("trainer: {device: cpu}\nalgorithm: {adv_estimator: grpo}\n"
                        "data: {train_batch_size: 8}\nactor: {ppo_mini_batch_size: 4}\n"
                        "critic: {ppo_mini_batch_size: 9}\n")
                  .ok());
}

TEST(BatchSplits, ATokenBudgetBelowTheLongestRowNamesItsKey) {
  const std::string lengths =
      "trainer: {device: cpu}\nalgorithm: {adv_estimator: gae}\n"
      "data: {train_batch_size: 8, max_prompt_length: 64, max_response_length: 64}\n"
      "actor: {ppo_mini_batch_size: 4}\ncritic: {ppo_mini_batch_size: 4}\n";
  // Budgets count only where micro-batches are formed by tokens.
  EXPECT_TRUE(CheckYaml(lengths + "rollout: {log_prob_max_token_len_per_gpu: 100}\n").ok());
  EXPECT_TRUE(CheckYaml(lengths + "rollout: {log_prob_use_dynamic_bsz: true, "
                                  "log_prob_max_token_len_per_gpu: 128}\n")
                  .ok());
  const absl::Status policy = CheckYaml(lengths + "rollout: {log_prob_use_dynamic_bsz: true, "
                                                  "log_prob_max_token_len_per_gpu: 127}\n");
  EXPECT_EQ(policy.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(policy.message()),
              HasSubstr("rollout.log_prob_max_token_len_per_gpu (127) must be at least "
                        "data.max_prompt_length + data.max_response_length (128)"));
  const absl::Status critic = CheckYaml(
      "trainer: {device: cpu}\nalgorithm: {adv_estimator: gae}\n"
      "data: {train_batch_size: 8, max_prompt_length: 64, max_response_length: 64}\n"
      "actor: {ppo_mini_batch_size: 4}\n"
      "critic: {ppo_mini_batch_size: 4, use_dynamic_bsz: true, ppo_max_token_len_per_gpu: 64}\n");
  EXPECT_THAT(std::string(critic.message()), HasSubstr("critic.ppo_max_token_len_per_gpu (64)"));
}

TEST(BatchSplits, TheRewardModelsTokenBudgetHoldsItsLongestRow) {
  const std::string rm = std::string(kTwoCpuWorkers) +
                         "data: {train_batch_size: 8, max_prompt_length: 100, max_response_length: 50}\n"
                         "actor: {ppo_mini_batch_size: 4}\n";
  EXPECT_TRUE(CheckYaml(rm + "reward_model: {enable: true, use_dynamic_bsz: true, forward_max_token_len_per_gpu: 150}\n").ok());
  EXPECT_THAT(std::string(CheckYaml(rm + "reward_model: {enable: true, use_dynamic_bsz: true, "
                                         "forward_max_token_len_per_gpu: 149}\n")
                              .message()),
              HasSubstr("reward_model.forward_max_token_len_per_gpu (149) must be at least data.max_prompt_length"));
  // Re-rendered rows may be as long as reward_model.max_length.
  EXPECT_THAT(std::string(CheckYaml(rm + "reward_model: {enable: true, use_dynamic_bsz: true, "
                                         "forward_max_token_len_per_gpu: 150, max_length: 200, "
                                         "model: {input_tokenizer: tok}}\n")
                              .message()),
              HasSubstr("must be at least reward_model.max_length (200)"));
}

TEST(BatchSplits, SftAndDpoSplitTheirOwnBatches) {
  for (const char* mode : {"sft", "dpo"}) {
    EXPECT_TRUE(CheckYaml(std::string("trainer: {device: cpu, mode: ") + mode +
                          "}\ndata: {train_batch_size: 8}\nactor: {ppo_mini_batch_size: 3}\n")
                    .ok())
        << mode;
  }
  // SFT's micro-batches by tokens (actor.use_dynamic_bsz) hold whole rows.
  EXPECT_THAT(std::string(CheckYaml("trainer: {device: cpu, mode: sft}\n"
                                    "data: {train_batch_size: 8, max_prompt_length: 16, max_response_length: 8}\n"
                                    "actor: {use_dynamic_bsz: true, ppo_max_token_len_per_gpu: 20}\n")
                              .message()),
              HasSubstr("actor.ppo_max_token_len_per_gpu (20) must be at least data.max_prompt_length + "
                        "data.max_response_length (24)"));
}

// data.max_length bounds SFT and DPO rows as a whole (verl's SFT trainer): SFT's budget
// holds it, and other recipes refuse it.
TEST(BatchSplits, MaxLengthBoundsSftAndDpoRowsOnly) {
  const std::string sft =
      "trainer: {device: cpu, mode: sft}\n"
      "data: {train_batch_size: 8, max_prompt_length: 16, max_response_length: 8, max_length: 40}\n";
  EXPECT_TRUE(CheckYaml(sft + "actor: {use_dynamic_bsz: true, ppo_max_token_len_per_gpu: 40}\n").ok());
  EXPECT_THAT(std::string(CheckYaml(sft + "actor: {use_dynamic_bsz: true, ppo_max_token_len_per_gpu: 39}\n").message()),
              HasSubstr("actor.ppo_max_token_len_per_gpu (39) must be at least data.max_length (40)"));
  EXPECT_TRUE(CheckYaml("trainer: {device: cpu, mode: dpo}\ndata: {train_batch_size: 8, max_length: 40}\n").ok());
  EXPECT_EQ(CheckYaml("trainer: {device: cpu, mode: sft}\ndata: {train_batch_size: 8, max_length: 1}\n").message(),
            "data.max_length (1) leaves a row no token to train on: a row's first token is context only");
  EXPECT_EQ(CheckYaml(std::string(kTwoCpuWorkers) + "data: {train_batch_size: 8, max_length: 1024}\n"
                                                    "actor: {ppo_mini_batch_size: 4}\n")
                .message(),
            "data.max_length (1024) bounds SFT and DPO rows (trainer.mode sft or dpo); a ppo recipe bounds its "
            "prompts and responses, and its sft_warm_start's, by data.max_prompt_length and "
            "data.max_response_length: remove it");
}

}  // namespace
}  // namespace rollout::controller
