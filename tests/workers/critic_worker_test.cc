// The critic role of a worker on the tiny Qwen2 fixture (CPU, float32): values from the
// actor's model with a fresh value head, updates that fit the returns with verl's
// metrics, its methods by verl's names, micro-batches by tokens, and recipes that do
// not fit.
#include "workers/critic_worker.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "common/batch_metrics.h"
#include "common/file_util.h"
#include "tests/support/padded_sequences.h"
#include "tests/support/temp_dir.h"

namespace rollout::workers {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kFixture[] = "tests/data/tiny-qwen2";
constexpr int64_t kPrompt = 5;
constexpr int64_t kResponse = 4;
constexpr int64_t kRows = 4;  // critic.ppo_mini_batch_size 2 x rollout.n 2

CriticWorkerSetup TinySetup() {
  CriticWorkerSetup setup;
  config::Recipe& recipe = setup.recipe;
  recipe.mutable_actor()->mutable_model()->set_path(kFixture);
  recipe.mutable_critic()->mutable_model()->set_dtype("float32");
  recipe.mutable_critic()->set_ppo_mini_batch_size(2);
  recipe.mutable_critic()->set_ppo_micro_batch_size_per_gpu(2);
  recipe.mutable_critic()->set_cliprange_value(10);
  recipe.mutable_critic()->mutable_optim()->set_lr(1e-2);
  recipe.mutable_rollout()->set_n(2);
  setup.total_training_steps = 10;
  return setup;
}

// kRows sequences in verl's layout: row r has r % 2 tokens of prompt padding on the left
// and r % 3 of response padding on the right.
Batch Sequences() {
  return testing::PaddedSequences(
      kRows, kPrompt, kResponse, [](int64_t r) { return std::make_pair(r % 2, r % 3); }, 17);
}

TEST(CriticWorker, ValuesComeFromTheActorsModelWithAValueHeadAndAreMasked) {
  auto worker = CriticWorker::Create(TinySetup()).value();
  const Batch input = Sequences();
  const at::Tensor values = worker->ComputeValues(input).value().Tensor("values").value();
  ASSERT_EQ(values.sizes(), at::IntArrayRef({kRows, kResponse}));
  EXPECT_EQ(values.scalar_type(), at::kFloat);
  const at::Tensor mask = input.Tensor("response_mask").value().to(at::kFloat);
  const at::Tensor all = worker->model().Values(input.Tensor("input_ids").value(), input.Tensor("position_ids").value(),
                                                input.Tensor("attention_mask").value());
  const at::Tensor expected = all.narrow(1, kPrompt - 1, kResponse) * mask;
  EXPECT_TRUE(at::allclose(values, expected, 1e-5, 1e-6));
  EXPECT_GT(values.abs().sum().item<double>(), 0);
  EXPECT_EQ((values * (1 - mask)).abs().sum().item<double>(), 0);  // padding has no value
}

TEST(CriticWorker, UpdatesFitTheReturnsAndReportVerlsMetrics) {
  auto worker = CriticWorker::Create(TinySetup()).value();
  Batch batch = Sequences();
  ASSERT_TRUE(batch.AddTensor("returns", at::full({kRows, kResponse}, 0.7f)).ok());
  std::map<std::string, double> first, last;
  for (int step = 0; step < 30; ++step) {
    Batch update = batch;
    ASSERT_TRUE(update.Union(worker->ComputeValues(batch).value()).ok());
    last = GetBatchMetrics(worker->UpdateCritic(update).value()).value();
    if (step == 0) first = last;
  }
  for (const char* name : {"critic/vf_loss", "critic/vf_clipfrac", "critic/vpred_mean", "critic/grad_norm", "critic/lr"}) {
    ASSERT_TRUE(first.count(name)) << name;
    EXPECT_TRUE(std::isfinite(first.at(name))) << name;
  }
  EXPECT_EQ(first.at("critic/lr"), 1e-2);
  EXPECT_LT(last.at("critic/vf_loss"), 0.1 * first.at("critic/vf_loss"));
  EXPECT_NEAR(last.at("critic/vpred_mean"), 0.7, 0.05);
}

// critic.model.enable_gradient_checkpointing recomputes the value model's MLPs in the
// update's backward pass: the same update.
TEST(CriticWorker, GradientCheckpointingGivesTheSameUpdate) {
  CriticWorkerSetup setup = TinySetup();
  setup.recipe.mutable_critic()->mutable_model()->set_enable_gradient_checkpointing(true);
  auto checked = CriticWorker::Create(setup).value();
  auto plain = CriticWorker::Create(TinySetup()).value();
  EXPECT_TRUE(checked->model().backbone().activation_checkpointing());
  EXPECT_FALSE(plain->model().backbone().activation_checkpointing());
  Batch batch = Sequences();
  ASSERT_TRUE(batch.AddTensor("returns", at::full({kRows, kResponse}, 0.7f)).ok());
  ASSERT_TRUE(batch.Union(plain->ComputeValues(batch).value()).ok());
  const auto want = GetBatchMetrics(plain->UpdateCritic(batch).value()).value();
  const auto got = GetBatchMetrics(checked->UpdateCritic(batch).value()).value();
  for (const char* name : {"critic/vf_loss", "critic/grad_norm", "critic/vpred_mean"}) {
    EXPECT_NEAR(got.at(name), want.at(name), 1e-5 * (1 + std::abs(want.at(name)))) << name;
  }
  const at::Tensor after = checked->ComputeValues(batch).value().Tensor("values").value();
  EXPECT_TRUE(at::allclose(after, plain->ComputeValues(batch).value().Tensor("values").value(), 1e-4, 1e-5));
}

TEST(CriticWorker, AnExplicitCriticModelPathWins) {
  CriticWorkerSetup setup = TinySetup();
  setup.recipe.mutable_actor()->mutable_model()->set_path("/nonexistent/actor");
  setup.recipe.mutable_critic()->mutable_model()->set_path(kFixture);
  EXPECT_TRUE(CriticWorker::Create(setup).ok());
}

TEST(CriticWorker, RegistersItsMethodsByVerlsNames) {
  auto worker = CriticWorker::Create(TinySetup()).value();
  MethodRegistry registry;
  ASSERT_TRUE(worker->RegisterMethods(&registry).ok());
  EXPECT_THAT(registry.Names(), ElementsAre("critic.compute_values", "critic.load_checkpoint",
                                            "critic.save_checkpoint", "critic.update_critic",
                                            "critic.wait_checkpoint"));
}

TEST(CriticWorker, RecipesAndBatchesThatDoNotFitAreClearErrors) {
  CriticWorkerSetup setup = TinySetup();
  setup.world = 3;
  EXPECT_THAT(CriticWorker::Create(setup).status().message(),
              HasSubstr("critic.ppo_mini_batch_size x rollout.n = 4 rows do not split over 3 critic workers"));
  setup = TinySetup();
  setup.recipe.mutable_critic()->mutable_model()->set_lora_rank(8);
  EXPECT_EQ(CriticWorker::Create(setup).status().code(), absl::StatusCode::kUnimplemented);
  setup = TinySetup();
  setup.recipe.mutable_critic()->mutable_model()->set_path("/nonexistent/critic");
  EXPECT_THAT(CriticWorker::Create(setup).status().message(), HasSubstr("critic model '/nonexistent/critic'"));
  setup = TinySetup();
  setup.recipe.mutable_actor()->mutable_model()->clear_path();
  EXPECT_THAT(CriticWorker::Create(setup).status().message(), HasSubstr("critic.model.path is not set"));

  auto worker = CriticWorker::Create(TinySetup()).value();
  Batch update = Sequences();
  ASSERT_TRUE(update.Union(worker->ComputeValues(update).value()).ok());
  EXPECT_THAT(worker->UpdateCritic(update).status().message(), HasSubstr("returns"));
  ASSERT_TRUE(update.AddTensor("returns", at::zeros({kRows, kResponse})).ok());
  EXPECT_THAT(worker->UpdateCritic(update.Slice(0, 0).value()).status().message(), HasSubstr("no rows to train on"));
}

// critic.use_dynamic_bsz forms compute_values' micro-batches from
// critic.forward_max_token_len_per_gpu: the same values, and a budget below a row's
// tokens (row 0 holds all 9) is an error.
TEST(CriticWorker, ValuesByTokensFollowTheForwardBudget) {
  const Batch input = Sequences();
  auto by_rows = CriticWorker::Create(TinySetup()).value();
  const at::Tensor expected = by_rows->ComputeValues(input).value().Tensor("values").value();
  CriticWorkerSetup setup = TinySetup();
  setup.recipe.mutable_critic()->set_use_dynamic_bsz(true);
  setup.recipe.mutable_critic()->set_forward_max_token_len_per_gpu(kPrompt + kResponse);
  auto by_tokens = CriticWorker::Create(setup).value();
  const at::Tensor values = by_tokens->ComputeValues(input).value().Tensor("values").value();
  EXPECT_TRUE(at::allclose(values, expected, 1e-5, 1e-6));
  setup.recipe.mutable_critic()->set_forward_max_token_len_per_gpu(kPrompt + kResponse - 1);
  auto too_small = CriticWorker::Create(setup).value();
  EXPECT_THAT(too_small->ComputeValues(input).status().message(),
              HasSubstr("compute_values: row 0 holds 9 tokens, more than the micro-batch budget of 8"));
}


TEST(CriticWorker, ACheckpointRestoresTheValueModelAndItsOptimizerExactly) {
  testing::TempDir dir("critic_ckpt");
  CriticWorkerSetup setup = TinySetup();
  for (const char* part : {"model", "optimizer", "extra", "hf_model"}) {
    setup.recipe.mutable_critic()->mutable_checkpoint()->add_save_contents(part);
  }
  for (const char* part : {"model", "optimizer", "extra"}) {
    setup.recipe.mutable_critic()->mutable_checkpoint()->add_load_contents(part);
  }
  auto trained = CriticWorker::Create(setup).value();
  auto restored = CriticWorker::Create(setup).value();
  Batch update = Sequences();
  ASSERT_TRUE(update.AddTensor("returns", at::full({kRows, kResponse}, 0.7f)).ok());
  ASSERT_TRUE(update.Union(trained->ComputeValues(update).value()).ok());
  ASSERT_TRUE(trained->UpdateCritic(update).ok());
  Batch in_dir;
  in_dir.SetMeta("dir", dir.Path("critic"));
  ASSERT_TRUE(trained->SaveCheckpoint(in_dir).ok());
  EXPECT_TRUE(ReadFile(dir.Path("critic/huggingface/config.json")).ok());
  ASSERT_TRUE(restored->LoadCheckpoint(in_dir).ok());
  // One more update on each: the same weights, moments and learning rate give the same result.
  ASSERT_TRUE(trained->UpdateCritic(update).ok());
  ASSERT_TRUE(restored->UpdateCritic(update).ok());
  const auto a = trained->model().NamedParameters();
  const auto b = restored->model().NamedParameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(*a[i].second, *b[i].second)) << a[i].first;
}

}  // namespace
}  // namespace rollout::workers
