// The reward_model role of a worker on a tiny reward model (the tiny Qwen2 fixture with a
// random score head, CPU, float32): each row's score is the model's output at its last
// token, computed here on the unpadded sequence alone; with input_tokenizer the rows are
// re-rendered in the reward model's chat template first; micro-batches by rows or
// tokens agree; models and inputs that do not fit are one-line errors.
#include "workers/reward_model_worker.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/padded_sequences.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tiny_reward_model.h"

namespace rollout::workers {
namespace {

using ::testing::HasSubstr;

constexpr char kFixture[] = "tests/data/tiny-qwen2";
constexpr int64_t kPrompt = 5;
constexpr int64_t kResponse = 4;
constexpr int64_t kRows = 3;

class RewardModelWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(testing::WriteTinyRewardModel(kFixture, dir_.path(), 7).ok()); }

  RewardModelWorkerSetup Setup() const {
    RewardModelWorkerSetup setup;
    setup.recipe.mutable_reward_model()->set_enable(true);
    setup.recipe.mutable_reward_model()->mutable_model()->set_path(dir_.path());
    setup.recipe.mutable_reward_model()->mutable_model()->set_dtype("float32");
    // The actor's ids as they are; the tests of re-rendering name the tokenizer.
    setup.recipe.mutable_reward_model()->mutable_model()->set_input_tokenizer("null");
    setup.recipe.mutable_reward_model()->set_micro_batch_size_per_gpu(2);
    setup.recipe.mutable_data()->set_max_prompt_length(kPrompt);
    setup.recipe.mutable_data()->set_max_response_length(kResponse);
    return setup;
  }

  // The reward model's output at the last of `ids`, scored alone (no padding).
  double ScoreAlone(const std::vector<int64_t>& ids) const {
    const std::unique_ptr<models::ValueModel> model =
        models::ValueModel::Load(dir_.path(), models::LoadOptions(), 0).value();
    return testing::ScoreAlone(*model, std::vector<int32_t>(ids.begin(), ids.end()));
  }

  testing::TempDir dir_{"reward_model_worker"};
};

// kRows sequences in verl's layout: row r has r tokens of prompt padding on the left and
// r of response padding on the right.
Batch Sequences() {
  return testing::PaddedSequences(kRows, kPrompt, kResponse, [](int64_t r) { return std::make_pair(r, r); }, 5);
}

// Row r's ids without its padding.
std::vector<int64_t> Unpadded(const Batch& batch, int64_t row) {
  const at::Tensor ids = batch.Tensor("input_ids").value()[row];
  const at::Tensor mask = batch.Tensor("attention_mask").value()[row];
  std::vector<int64_t> kept;
  for (int64_t t = 0; t < ids.size(0); ++t) {
    if (mask[t].item<int64_t>() == 1) kept.push_back(ids[t].item<int64_t>());
  }
  return kept;
}

TEST_F(RewardModelWorkerTest, ScoresEachRowAtItsLastToken) {
  std::unique_ptr<RewardModelWorker> worker = RewardModelWorker::Create(Setup()).value();
  const Batch batch = Sequences();
  const absl::StatusOr<Batch> scored = worker->ComputeRmScore(batch);
  ASSERT_TRUE(scored.ok()) << scored.status();
  const at::Tensor scores = scored->Tensor("rm_scores").value();
  ASSERT_EQ(scores.sizes(), at::IntArrayRef({kRows}));
  EXPECT_EQ(scores.scalar_type(), at::kFloat);
  for (int64_t row = 0; row < kRows; ++row) {
    EXPECT_NEAR(scores[row].item<double>(), ScoreAlone(Unpadded(batch, row)), 1e-5) << "row " << row;
  }
  EXPECT_NE(scores[0].item<double>(), scores[1].item<double>());
}

TEST_F(RewardModelWorkerTest, MicroBatchesByRowsOrTokensAgree) {
  RewardModelWorkerSetup by_rows = Setup();
  by_rows.recipe.mutable_reward_model()->set_micro_batch_size_per_gpu(1);
  RewardModelWorkerSetup by_tokens = Setup();
  by_tokens.recipe.mutable_reward_model()->set_use_dynamic_bsz(true);
  by_tokens.recipe.mutable_reward_model()->set_forward_max_token_len_per_gpu(kPrompt + kResponse);
  const Batch batch = Sequences();
  const at::Tensor a = RewardModelWorker::Create(by_rows).value()->ComputeRmScore(batch).value().Tensor("rm_scores").value();
  const at::Tensor b =
      RewardModelWorker::Create(by_tokens).value()->ComputeRmScore(batch).value().Tensor("rm_scores").value();
  EXPECT_TRUE(at::allclose(a, b, 1e-5, 1e-6)) << a << b;
  by_tokens.recipe.mutable_reward_model()->set_forward_max_token_len_per_gpu(kPrompt + kResponse - 1);
  const absl::StatusOr<Batch> over = RewardModelWorker::Create(by_tokens).value()->ComputeRmScore(batch);
  EXPECT_EQ(over.status().code(), absl::StatusCode::kInvalidArgument);
}

// verl's _switch_chat_template: the chat plus the response as the assistant's message, in
// the reward model's template (the EOS text dropped), or a text prompt followed by the
// response; cut at max_length.
TEST_F(RewardModelWorkerTest, ReRendersPromptsAndResponsesInItsChatTemplate) {
  const std::unique_ptr<models::Tokenizer> tokenizer = models::Tokenizer::Load(kFixture).value();
  ASSERT_FALSE(tokenizer->eos_token_ids().empty());
  const int32_t eos = tokenizer->eos_token_ids().front();
  const std::vector<int32_t> five = tokenizer->Encode(" 5");
  const std::vector<int32_t> two = tokenizer->Encode("2!");
  // Row 0 ends in the EOS, row 1 was cut at the length limit.
  at::Tensor responses = at::zeros({2, kResponse}, at::kLong);
  at::Tensor attention = at::zeros({2, 3 + kResponse}, at::kLong);
  attention.narrow(1, 0, 3).fill_(1);
  std::vector<int32_t> row0 = five;
  row0.push_back(eos);
  for (size_t t = 0; t < row0.size(); ++t) responses[0][static_cast<int64_t>(t)] = row0[t];
  for (size_t t = 0; t < two.size(); ++t) responses[1][static_cast<int64_t>(t)] = two[t];
  attention.narrow(1, 3, static_cast<int64_t>(row0.size()))[0].fill_(1);
  attention.narrow(1, 3, static_cast<int64_t>(two.size()))[1].fill_(1);
  Batch batch;
  ASSERT_TRUE(batch.AddTensor("responses", responses).ok());
  ASSERT_TRUE(batch.AddTensor("attention_mask", attention).ok());
  ASSERT_TRUE(batch.AddStrings("prompt", {R"([{"role": "user", "content": "2 + 3?"}])", "1+1="}).ok());
  ASSERT_TRUE(batch.AddStrings("prompt_format", {"chat", "text"}).ok());

  RewardModelWorkerSetup setup = Setup();
  setup.recipe.mutable_reward_model()->mutable_model()->set_input_tokenizer(kFixture);
  setup.recipe.mutable_reward_model()->set_max_length(64);
  const absl::StatusOr<Batch> scored = RewardModelWorker::Create(setup).value()->ComputeRmScore(batch);
  ASSERT_TRUE(scored.ok()) << scored.status();
  const at::Tensor scores = scored->Tensor("rm_scores").value();
  const std::vector<int32_t> chat =
      tokenizer->EncodeChat({{"user", "2 + 3?"}, {"assistant", " 5"}}, /*add_generation_prompt=*/false).value();
  const std::vector<int32_t> text = tokenizer->Encode("1+1=2!");
  EXPECT_NEAR(scores[0].item<double>(), ScoreAlone({chat.begin(), chat.end()}), 1e-5);
  EXPECT_NEAR(scores[1].item<double>(), ScoreAlone({text.begin(), text.end()}), 1e-5);

  // Unset, the input tokenizer is the actor's (verl's default).
  RewardModelWorkerSetup by_default = setup;
  by_default.recipe.mutable_reward_model()->mutable_model()->clear_input_tokenizer();
  by_default.recipe.mutable_actor()->mutable_model()->set_path(kFixture);
  const at::Tensor again =
      RewardModelWorker::Create(by_default).value()->ComputeRmScore(batch).value().Tensor("rm_scores").value();
  EXPECT_TRUE(at::equal(again, scores));
  by_default.recipe.mutable_actor()->mutable_model()->clear_path();
  EXPECT_THAT(RewardModelWorker::Create(by_default).status().message(),
              HasSubstr("input_tokenizer is unset, which means the actor's tokenizer"));

  setup.recipe.mutable_reward_model()->set_max_length(4);
  const at::Tensor cut = RewardModelWorker::Create(setup).value()->ComputeRmScore(batch).value().Tensor("rm_scores").value();
  EXPECT_NEAR(cut[0].item<double>(), ScoreAlone({chat.begin(), chat.begin() + 4}), 1e-5);
}

TEST(ResponseText, DropsTheEosTextAndKeepsOtherSpecialTokens) {
  const std::unique_ptr<models::Tokenizer> tokenizer = models::Tokenizer::Load(kFixture).value();
  const int32_t eos = tokenizer->eos_token_ids().front();
  std::vector<int32_t> ids = tokenizer->Encode("ab");
  const int32_t im_start = tokenizer->TokenToId("<|im_start|>");
  ASSERT_GE(im_start, 0);
  ids.push_back(im_start);
  ids.push_back(eos);
  EXPECT_EQ(ResponseText(*tokenizer, ids), "ab<|im_start|>");
}

TEST_F(RewardModelWorkerTest, RefusesACausalLmOrNoPath) {
  RewardModelWorkerSetup setup = Setup();
  setup.recipe.mutable_reward_model()->mutable_model()->set_path(kFixture);
  absl::StatusOr<std::unique_ptr<RewardModelWorker>> worker = RewardModelWorker::Create(setup);
  EXPECT_EQ(worker.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(worker.status().message(), HasSubstr("is a causal LM, not a reward model"));
  setup.recipe.mutable_reward_model()->mutable_model()->clear_path();
  worker = RewardModelWorker::Create(setup);
  EXPECT_THAT(worker.status().message(), HasSubstr("reward_model.model.path is not set"));
}

TEST_F(RewardModelWorkerTest, IdsOutsideItsVocabularyAreAnError) {
  std::unique_ptr<RewardModelWorker> worker = RewardModelWorker::Create(Setup()).value();
  Batch batch = Sequences();
  at::Tensor ids = batch.Tensor("input_ids").value().clone();
  ids[0][kPrompt] = 1 << 20;
  Batch wide;
  ASSERT_TRUE(wide.AddTensor("input_ids", ids).ok());
  ASSERT_TRUE(wide.Union(batch.Select({"attention_mask", "position_ids", "responses"}).value()).ok());
  const absl::StatusOr<Batch> scored = worker->ComputeRmScore(wide);
  EXPECT_EQ(scored.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(scored.status().message(), HasSubstr("outside the reward model's vocabulary"));
}

TEST_F(RewardModelWorkerTest, RegistersItsMethodByVerlsName) {
  std::unique_ptr<RewardModelWorker> worker = RewardModelWorker::Create(Setup()).value();
  MethodRegistry registry;
  ASSERT_TRUE(worker->RegisterMethods(&registry).ok());
  const absl::StatusOr<Batch> scored = registry.Invoke("reward_model.compute_rm_score", Sequences());
  ASSERT_TRUE(scored.ok()) << scored.status();
  EXPECT_EQ(scored->Tensor("rm_scores").value().size(0), kRows);
}

}  // namespace
}  // namespace rollout::workers
