// GRPO scored by a reward model (reward_model.enable, verl's RewardModelWorker) end to
// end on the CPU through real worker processes: a tiny reward model (the tiny Qwen2
// fixture with a random score head) colocated with the policy re-renders each chat
// prompt with its response in its own chat template (reward_model.model.input_tokenizer
// unset: the responses decoded by the actor's tokenizer), and its scores train, as
// recomputed here from the generation dump; validation keeps the rule-based reward; in
// a pool of its own, scoring the actor's tokens as they are (input_tokenizer null), it
// scores the same responses differently. On a GPU (ROLLOUT_E2E_DEVICE=cuda, the
// reward_model_cuda test) the colocated run trains there.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "models/tokenizer.h"
#include "models/value_model.h"
#include "tests/e2e/rollout_run.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tiny_reward_model.h"

namespace rollout {
namespace {

using testing::ReadJsonLines;
using testing::RolloutIn;

using ::testing::HasSubstr;

const std::string kSource = ROLLOUT_SOURCE_DIR;
const std::string kFixture = kSource + "/tests/data/tiny-qwen2";

// The i-th training prompt's question, asked as a chat.
std::string Question(int i) { return absl::StrCat("What is ", i, " + ", i + 2, "?"); }

// 8 chat prompts for training, 2 for validation, with ground truths for the rule-based
// reward (exact_match) that validation keeps.
void WriteData(const testing::TempDir& dir) {
  std::string train, val;
  for (int i = 0; i < 10; ++i) {
    const nlohmann::json row = {{"prompt", {{{"role", "user"}, {"content", Question(i)}}}},
                                {"ground_truth", std::to_string(2 * i + 2)},
                                {"data_source", "sums"}};
    absl::StrAppend(i < 8 ? &train : &val, row.dump(), "\n");
  }
  ASSERT_TRUE(MakeDirectories(dir.Path("data")).ok());
  ASSERT_TRUE(WriteFileAtomically(dir.Path("data/train.jsonl"), train).ok());
  ASSERT_TRUE(WriteFileAtomically(dir.Path("data/val.jsonl"), val).ok());
  ASSERT_TRUE(testing::WriteTinyRewardModel(kFixture, dir.Path("rm"), 11).ok());
}

testing::CommandResult Train(const testing::TempDir& dir, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {
      "train", kSource + "/recipes/grpo_arith.yaml", "data.train_files=[data/train.jsonl]",
      "data.val_files=[data/val.jsonl]", "actor.model.path=" + kFixture, "trainer.device=" + testing::Device(),
      "trainer.total_training_steps=2", "data.train_batch_size=4", "data.shuffle=false",
      "actor.ppo_mini_batch_size=4", "actor.ppo_micro_batch_size_per_gpu=4", "rollout.n=2",
      "rollout.cpu_kv_cache_gib=0.05", "data.max_response_length=8", "trainer.rollout_data_dir=dumps",
      "reward_model.enable=true", "reward_model.model.path=rm", "reward_model.model.dtype=float32",
      "reward_model.micro_batch_size_per_gpu=3"};
  args.insert(args.end(), extra.begin(), extra.end());
  return RolloutIn(dir.path(), args);
}

class RewardModelTrain : public ::testing::Test {
 protected:
  // The colocated run re-rendering the chats, shared by the tests that read it.
  static void SetUpTestSuite() {
    rendered_dir_ = new testing::TempDir("reward_model_e2e");
    WriteData(*rendered_dir_);
    // input_tokenizer unset: the actor's tokenizer, verl's default.
    rendered_ = new testing::CommandResult(Train(*rendered_dir_, {}));
  }
  static void TearDownTestSuite() {
    delete rendered_;
    delete rendered_dir_;
  }

  static testing::TempDir* rendered_dir_;
  static testing::CommandResult* rendered_;
};

testing::TempDir* RewardModelTrain::rendered_dir_ = nullptr;
testing::CommandResult* RewardModelTrain::rendered_ = nullptr;

TEST_F(RewardModelTrain, ItsScoresOfTheReRenderedChatsTrainAndValidationKeepsTheRule) {
  ASSERT_EQ(rendered_->exit_code, 0) << rendered_->output;
  EXPECT_THAT(rendered_->output, HasSubstr("roles actor+ref+reward_model+rollout"));
  const testing::TempDir& dir = *rendered_dir_;

  const std::unique_ptr<models::Tokenizer> tokenizer = models::Tokenizer::Load(kFixture).value();
  const std::unique_ptr<models::ValueModel> reward_model =
      models::ValueModel::Load(dir.Path("rm"), models::LoadOptions(), 0).value();
  const auto lines = ReadJsonLines(dir.Path("dumps/1.jsonl"));
  ASSERT_EQ(lines.size(), 8u);  // prompts 0-3 in file order, 2 responses each
  // The dump's text skips special tokens, which the reward model reads (all but the EOS):
  // a response that sampled one cannot be recomputed from it, so most rows, not all.
  double sum = 0;
  int matched = 0;
  for (size_t row = 0; row < lines.size(); ++row) {
    const double score = lines[row]["score"].get<double>();
    sum += score;
    const std::string response = lines[row]["output"].get<std::string>();
    const std::vector<int32_t> ids =
        tokenizer
            ->EncodeChat({{"user", Question(static_cast<int>(row / 2))}, {"assistant", response}},
                         /*add_generation_prompt=*/false)
            .value();
    if (std::abs(score - testing::ScoreAlone(*reward_model, ids)) < 1e-4) ++matched;
  }
  EXPECT_GE(matched, 6) << "of 8 dumped scores recomputed from their chats";
  const auto steps = testing::StepMetrics(dir.path(), "grpo_arith");
  ASSERT_EQ(steps.count(1), 1u);
  EXPECT_NEAR(steps.at(1)["critic/score/mean"].get<double>(), sum / 8, 1e-5);
  // Validation scores with reward.* (exact match: 0 or 1), before and after training.
  for (int step : {0, 2}) {
    ASSERT_EQ(steps.count(step), 1u);
    const double accuracy = steps.at(step)["val-core/sums/reward/mean@1"].get<double>();
    EXPECT_TRUE(accuracy >= 0 && accuracy <= 1) << accuracy;
  }
}

TEST_F(RewardModelTrain, InItsOwnPoolItScoresTheActorsTokensAsTheyAre) {
  ASSERT_EQ(rendered_->exit_code, 0) << rendered_->output;
  testing::TempDir separate("reward_model_e2e_pool");
  WriteData(separate);
  const testing::CommandResult second =
      Train(separate, {"resource_pools.policy.device=cpu", "resource_pools.rm.device=cpu", "placement.actor=policy",
                       "placement.rollout=policy", "placement.ref=policy", "placement.reward_model=rm",
                       "reward_model.model.input_tokenizer=null"});
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_THAT(second.output, HasSubstr("pool rm: 1 node(s) x 1 cpu, roles reward_model"));
  const auto a = ReadJsonLines(rendered_dir_->Path("dumps/1.jsonl"));
  const auto b = ReadJsonLines(separate.Path("dumps/1.jsonl"));
  ASSERT_EQ(a.size(), b.size());
  for (size_t row = 0; row < a.size(); ++row) {
    EXPECT_EQ(a[row]["output"], b[row]["output"]) << "row " << row;  // the same first policy
    EXPECT_NE(a[row]["score"], b[row]["score"]) << "row " << row;    // other tokens scored
    EXPECT_TRUE(std::isfinite(b[row]["score"].get<double>()));
  }
}

TEST_F(RewardModelTrain, ACausalLmIsNoRewardModel) {
  testing::TempDir dir("reward_model_e2e_lm");
  WriteData(dir);
  const testing::CommandResult run = Train(dir, {"reward_model.model.path=" + kFixture});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.output, HasSubstr("is a causal LM, not a reward model"));
}

// DAPO's overlong shaping applies to reward.*'s scores; verl's manager skips it for a
// reward model's, which here is an error rather than a silent no-op.
TEST_F(RewardModelTrain, TheOverlongBufferIsRefusedWithIt) {
  testing::TempDir dir("reward_model_e2e_overlong");
  WriteData(dir);
  const testing::CommandResult run = Train(dir, {"reward.overlong_buffer.enable=true"});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.output, HasSubstr("reward.overlong_buffer shapes the rule-based scores of reward.*"));
}

}  // namespace
}  // namespace rollout
