// Parity of CausalLM with HF transformers on the tiny Qwen2 fixture
// (tests/data/tiny-qwen2/model_expect.json), and the model's own invariants.
#include "models/causal_lm.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "models/kv_cache.h"
#include "models/token_scores.h"
#include "tests/support/temp_dir.h"

namespace rollout::models {
namespace {

using ::rollout::testing::TempDir;

constexpr char kFixture[] = "tests/data/tiny-qwen2";

nlohmann::json Expected() {
  return nlohmann::json::parse(ReadFile(JoinPath(kFixture, "model_expect.json")).value());
}

std::unique_ptr<CausalLM> LoadFixture() {
  absl::StatusOr<std::unique_ptr<CausalLM>> model = CausalLM::Load(kFixture, LoadOptions());
  EXPECT_TRUE(model.ok()) << model.status();
  return std::move(model).value();
}

at::Tensor Ids(const std::vector<int64_t>& ids) {
  return at::tensor(ids, at::kLong).unsqueeze(0);  // [1, T]
}

at::Tensor Positions(int64_t t) { return at::arange(t, at::kLong).unsqueeze(0); }

std::vector<int64_t> GreedyDecode(const CausalLM& model, const std::vector<int64_t>& prompt,
                                  int steps) {
  const TransformerConfig& c = model.config();
  DenseKvCache cache(c.num_hidden_layers, 1, c.num_key_value_heads, c.head_dim,
                     prompt.size() + steps, at::TensorOptions().dtype(model.dtype()));
  c10::NoGradGuard no_grad;
  cache.BeginStep(prompt.size());
  at::Tensor hidden = model.ForwardStep(at::tensor(prompt, at::kLong),
                                        at::arange(static_cast<int64_t>(prompt.size()), at::kLong), cache);
  std::vector<int64_t> out;
  for (int i = 0; i < steps; ++i) {
    const int64_t next = model.Logits(hidden[-1]).argmax().item<int64_t>();
    out.push_back(next);
    cache.BeginStep(1);
    hidden = model.ForwardStep(at::tensor({next}, at::kLong),
                               at::tensor({static_cast<int64_t>(prompt.size()) + i}, at::kLong),
                               cache);
  }
  return out;
}

TEST(CausalLmParity, LogitsArgmaxAndLogProbsMatchHf) {
  std::unique_ptr<CausalLM> model = LoadFixture();
  c10::NoGradGuard no_grad;
  for (const nlohmann::json& c : Expected()["forward"]) {
    const std::vector<int64_t> ids = c["ids"];
    const int64_t t = ids.size();
    const at::Tensor hidden = model->Forward(Ids(ids), Positions(t), at::Tensor());
    const at::Tensor logits = model->Logits(hidden)[0];  // [T, V]

    const std::vector<float> last = c["last_logits"];
    EXPECT_LT((logits[t - 1] - at::tensor(last)).abs().max().item<float>(), 1e-4);
    const std::vector<float> sums = c["logits_sum_per_pos"];
    EXPECT_TRUE(at::allclose(logits.sum(-1), at::tensor(sums), 1e-4, 1e-3));
    const std::vector<int64_t> argmax = c["argmax"];
    EXPECT_EQ(std::vector<int64_t>(logits.argmax(-1).data_ptr<int64_t>(),
                                   logits.argmax(-1).data_ptr<int64_t>() + t),
              argmax);

    const TokenScores scores = ScoreTokens(*model, hidden.narrow(1, 0, t - 1),
                                           Ids(ids).narrow(1, 1, t - 1), models::kWithEntropy,
                                           /*temperature=*/1.0, /*chunk_tokens=*/5);
    const std::vector<float> next = c["logprob_of_next"];
    EXPECT_LT((scores.log_probs[0] - at::tensor(next)).abs().max().item<float>(), 1e-4);
    EXPECT_TRUE((scores.entropy >= 0).all().item<bool>());
  }
}

// sum_pi_squared is the sum of the squared softmax over the vocabulary, chunking aside,
// and carries no gradient.
TEST(ScoreTokens, SumPiSquaredIsTheSquaredSoftmaxSummed) {
  std::unique_ptr<CausalLM> model = LoadFixture();
  const std::vector<int64_t> ids = Expected()["forward"][0]["ids"];
  const int64_t t = ids.size();
  const at::Tensor hidden = model->Forward(Ids(ids), Positions(t), at::Tensor()).narrow(1, 0, t - 1);
  ScoreExtras extras;
  extras.sum_pi_squared = true;
  const TokenScores scores = ScoreTokens(*model, hidden, Ids(ids).narrow(1, 1, t - 1), extras,
                                         /*temperature=*/0.7, /*chunk_tokens=*/3);
  ASSERT_TRUE(scores.sum_pi_squared.defined());
  EXPECT_FALSE(scores.entropy.defined());
  EXPECT_FALSE(scores.sum_pi_squared.requires_grad());
  const at::Tensor probabilities = (model->Logits(hidden).to(at::kDouble) / 0.7).softmax(-1);
  const at::Tensor want = probabilities.square().sum(-1);
  EXPECT_TRUE(at::allclose(scores.sum_pi_squared.to(at::kDouble), want, 1e-5, 1e-7))
      << scores.sum_pi_squared << want;
  EXPECT_TRUE((want > 0).logical_and(want <= 1).all().item<bool>());
}

TEST(CausalLmParity, SixteenGreedyTokensMatchHf) {
  std::unique_ptr<CausalLM> model = LoadFixture();
  for (const nlohmann::json& c : Expected()["greedy"]) {
    const std::vector<int64_t> prompt = c["prompt"];
    const std::vector<int64_t> want = c["output"];
    EXPECT_EQ(GreedyDecode(*model, prompt, 16), want);
  }
}

TEST(CausalLm, IncrementalForwardEqualsFullForward) {
  std::unique_ptr<CausalLM> model = LoadFixture();
  c10::NoGradGuard no_grad;
  const std::vector<int64_t> ids = Expected()["forward"][0]["ids"];
  const int64_t t = ids.size();
  const at::Tensor full = model->Forward(Ids(ids), Positions(t), at::Tensor())[0];
  const TransformerConfig& c = model->config();
  DenseKvCache cache(c.num_hidden_layers, 1, c.num_key_value_heads, c.head_dim, t,
                     at::TensorOptions());
  cache.BeginStep(t - 3);
  at::Tensor first = model->ForwardStep(at::tensor(ids, at::kLong).narrow(0, 0, t - 3),
                                        at::arange(t - 3, at::kLong), cache);
  std::vector<at::Tensor> steps = {first};
  for (int64_t i = t - 3; i < t; ++i) {
    cache.BeginStep(1);
    steps.push_back(model->ForwardStep(at::tensor({ids[i]}, at::kLong),
                                       at::tensor({i}, at::kLong), cache));
  }
  EXPECT_TRUE(at::allclose(at::cat(steps), full, 1e-5, 1e-5));
}

TEST(CausalLm, LeftPaddedBatchEqualsEachRowAlone) {
  std::unique_ptr<CausalLM> model = LoadFixture();
  c10::NoGradGuard no_grad;
  const std::vector<int64_t> a = {5, 9, 13, 200, 7};
  const std::vector<int64_t> b = {300, 4};
  // Row b is left-padded by 3; positions count tokens only.
  const at::Tensor ids = at::tensor({5, 9, 13, 200, 7, 0, 0, 0, 300, 4}, at::kLong).view({2, 5});
  const at::Tensor mask = at::tensor({1, 1, 1, 1, 1, 0, 0, 0, 1, 1}, at::kLong).view({2, 5});
  const at::Tensor positions = at::tensor({0, 1, 2, 3, 4, 0, 0, 0, 0, 1}, at::kLong).view({2, 5});
  const at::Tensor batched = model->Forward(ids, positions, mask);
  const at::Tensor alone_a = model->Forward(Ids(a), Positions(5), at::Tensor())[0];
  const at::Tensor alone_b = model->Forward(Ids(b), Positions(2), at::Tensor())[0];
  EXPECT_TRUE(at::allclose(batched[0], alone_a, 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(batched[1].narrow(0, 3, 2), alone_b, 1e-5, 1e-5));
  EXPECT_FALSE(batched.isnan().any().item<bool>());
}

// verl's layout: the prompt left-padded, the response right-padded (the rows are
// computed rotated to the front, without a padding mask).
TEST(CausalLm, LeftAndRightPaddedBatchEqualsEachRowAlone) {
  std::unique_ptr<CausalLM> model = LoadFixture();
  c10::NoGradGuard no_grad;
  const std::vector<int64_t> a = {5, 9, 13, 200};
  const std::vector<int64_t> b = {300, 4, 17};
  const at::Tensor ids = at::tensor({0, 5, 9, 13, 200, 0, 0, 0, 300, 4, 17, 0}, at::kLong).view({2, 6});
  const at::Tensor mask = at::tensor({0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0}, at::kLong).view({2, 6});
  const at::Tensor positions = (mask.cumsum(1) - 1).clamp_min(0);
  const at::Tensor batched = model->Forward(ids, positions, mask);
  EXPECT_TRUE(at::allclose(batched[0].narrow(0, 1, 4), model->Forward(Ids(a), Positions(4), at::Tensor())[0],
                           1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(batched[1].narrow(0, 2, 3), model->Forward(Ids(b), Positions(3), at::Tensor())[0],
                           1e-5, 1e-5));
  EXPECT_FALSE(batched.isnan().any().item<bool>());
}

// A row with a hole keeps the padding mask: its tokens see the tokens before them only.
TEST(CausalLm, RowWithAHoleEqualsItsTokensAlone) {
  std::unique_ptr<CausalLM> model = LoadFixture();
  c10::NoGradGuard no_grad;
  const at::Tensor ids = at::tensor({5, 9, 0, 13, 200}, at::kLong).view({1, 5});
  const at::Tensor mask = at::tensor({1, 1, 0, 1, 1}, at::kLong).view({1, 5});
  const at::Tensor positions = at::tensor({0, 1, 1, 2, 3}, at::kLong).view({1, 5});
  const at::Tensor batched = model->Forward(ids, positions, mask)[0];
  const at::Tensor alone = model->Forward(Ids({5, 9, 13, 200}), Positions(4), at::Tensor())[0];
  EXPECT_TRUE(at::allclose(at::cat({batched.narrow(0, 0, 2), batched.narrow(0, 3, 2)}), alone, 1e-5, 1e-5));
}

TEST(CausalLm, SavedAndReloadedModelIsBitIdentical) {
  std::unique_ptr<CausalLM> model = LoadFixture();
  TempDir dir("saved_model");
  ASSERT_TRUE(model->Save(dir.path()).ok());
  absl::StatusOr<std::unique_ptr<CausalLM>> reloaded = CausalLM::Load(dir.path(), LoadOptions());
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  const auto original = std::as_const(*model).NamedParameters();
  const auto loaded = std::as_const(**reloaded).NamedParameters();
  ASSERT_EQ(original.size(), loaded.size());
  for (size_t i = 0; i < original.size(); ++i) {
    EXPECT_EQ(original[i].first, loaded[i].first);
    EXPECT_TRUE(at::equal(*original[i].second, *loaded[i].second)) << original[i].first;
  }
  // And the fixture's own tensors came through unchanged.
  EXPECT_EQ((*reloaded)->config().vocab_size, 514);
}

TEST(CausalLm, RandomInitIsDeterministicAndFollowsHfInit) {
  TransformerConfig config = LoadFixture()->config();
  std::unique_ptr<CausalLM> a = CausalLM::RandomInit(config, 7, LoadOptions());
  std::unique_ptr<CausalLM> b = CausalLM::RandomInit(config, 7, LoadOptions());
  for (size_t i = 0; i < a->NamedParameters().size(); ++i) {
    EXPECT_TRUE(at::equal(*a->NamedParameters()[i].second, *b->NamedParameters()[i].second));
  }
  const at::Tensor embed = *a->NamedParameters()[0].second;
  EXPECT_NEAR(embed.std().item<double>(), 0.02, 0.002);
  EXPECT_TRUE(at::equal(embed[config.pad_token_id], at::zeros({config.hidden_size})));
}

TEST(CausalLm, MissingTensorIsNamed) {
  TempDir dir("broken_model");
  std::unique_ptr<CausalLM> model = LoadFixture();
  ASSERT_TRUE(model->Save(dir.path()).ok());
  // A config with one more layer than the weights hold.
  std::string config = ReadFile(dir.Path("config.json")).value();
  const std::string from = "\"num_hidden_layers\": 2";
  ASSERT_NE(config.find(from), std::string::npos) << config;
  config.replace(config.find(from), from.size(), "\"num_hidden_layers\": 3");
  ASSERT_TRUE(WriteFileAtomically(dir.Path("config.json"), config).ok());
  absl::StatusOr<std::unique_ptr<CausalLM>> loaded = CausalLM::Load(dir.path(), LoadOptions());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(loaded.status().message()),
              ::testing::HasSubstr("no tensor model.layers.2."));
}

}  // namespace
}  // namespace rollout::models
