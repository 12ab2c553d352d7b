// The critic on a tiny value model on CPU: values of the response positions, and
// updates that fit the returns.
#include "workers/value_critic.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "common/mix_bits.h"
#include "models/presets.h"
#include "tests/support/temp_dir.h"

namespace rollout::workers {
namespace {

constexpr int64_t kPrompt = 4;
constexpr int64_t kResponse = 3;

std::unique_ptr<models::ValueModel> TinyValueModel(const testing::TempDir& dir) {
  models::TransformerConfig config = models::PresetConfig("tiny", 64).value();
  config.pad_token_id = 0;
  EXPECT_TRUE(models::CausalLM::RandomInit(config, 3, models::LoadOptions())->Save(dir.path()).ok());
  return models::ValueModel::Load(dir.path(), models::LoadOptions(), 5).value();
}

ValueBatch MakeBatch(int64_t rows) {
  at::manual_seed(13);
  const at::TensorOptions ints = at::TensorOptions().dtype(at::kLong);
  ValueBatch batch;
  batch.input_ids = at::randint(1, 64, {rows, kPrompt + kResponse}, ints);
  batch.attention_mask = at::ones_like(batch.input_ids);
  batch.position_ids = at::arange(kPrompt + kResponse, ints).expand({rows, kPrompt + kResponse});
  batch.response_mask = at::ones({rows, kResponse}, ints);
  batch.returns = at::ones({rows, kResponse});
  return batch;
}

ValueCriticOptions Options() {
  ValueCriticOptions options;
  options.plan.mini_batch_rows = 4;
  options.plan.micro_batch.rows = 2;
  options.lr_schedule.lr = 1e-2;
  options.value_loss.cliprange_value = 10;
  return options;
}

TEST(ValueCritic, ValuesAreTheResponsePositionsOfTheModelsValues) {
  testing::TempDir dir;
  auto model = TinyValueModel(dir);
  auto critic = ValueCritic::Create(model.get(), Options()).value();
  const ValueBatch batch = MakeBatch(4);
  const at::Tensor values = critic->ComputeValues(batch, 1).value();
  const at::Tensor expected = model->Values(batch.input_ids, batch.position_ids, batch.attention_mask)
                                  .narrow(1, kPrompt - 1, kResponse);
  EXPECT_TRUE(at::allclose(values, expected, 1e-5, 1e-6));
  EXPECT_FALSE(values.requires_grad());
}

// A token budget forms the micro-batches a row count would (each row holds 7 tokens):
// the same values; a budget below one row is an error naming the row.
TEST(ValueCritic, TokenBudgetMicroBatchesGiveTheValuesOfRowMicroBatches) {
  testing::TempDir dir;
  auto model = TinyValueModel(dir);
  auto critic = ValueCritic::Create(model.get(), Options()).value();
  const ValueBatch batch = MakeBatch(5);
  const at::Tensor by_rows = critic->ComputeValues(batch, 2).value();
  const at::Tensor by_tokens = critic->ComputeValues(batch, MicroBatchSize(1, 2 * (kPrompt + kResponse))).value();
  EXPECT_TRUE(at::allclose(by_tokens, by_rows, 1e-5, 1e-6));
  EXPECT_THAT(critic->ComputeValues(batch, MicroBatchSize(1, kPrompt + kResponse - 1)).status().message(),
              ::testing::HasSubstr("compute_values: row 0 holds 7 tokens, more than the micro-batch budget of 6"));
}

TEST(ValueCritic, UpdatesFitTheReturns) {
  testing::TempDir dir;
  auto model = TinyValueModel(dir);
  auto critic = ValueCritic::Create(model.get(), Options()).value();
  ValueBatch batch = MakeBatch(8);
  std::map<std::string, double> first, last;
  for (int step = 0; step < 20; ++step) {
    batch.values = critic->ComputeValues(batch, 8).value();
    last = critic->Update(batch).value();
    if (step == 0) first = last;
  }
  EXPECT_LT(last.at("critic/vf_loss"), 0.1 * first.at("critic/vf_loss"));
  EXPECT_NEAR(last.at("critic/vpred_mean"), 1.0, 0.2);
  EXPECT_GT(first.at("critic/grad_norm"), 0);
  EXPECT_EQ(first.at("critic/lr"), 1e-2);
  EXPECT_EQ(first.at("critic/vf_clipfrac"), 0);
}

// critic.shuffle: an update with shuffled epochs is, exactly, the unshuffled update of
// the batch reordered as each epoch's seeded order says (the seed mixed with the update's
// count, 1 for the first update).
TEST(ValueCritic, ShuffledUpdatesVisitTheRowsInTheSeededOrder) {
  testing::TempDir dir;
  ValueBatch batch = MakeBatch(8);
  batch.returns = at::linspace(-1, 1, 8).unsqueeze(1).expand({8, kResponse}).contiguous();
  batch.values = at::zeros({8, kResponse});
  ValueCriticOptions options = Options();
  options.plan.shuffle = true;
  options.plan.shuffle_seed = 21;
  auto shuffled_model = TinyValueModel(dir);
  auto shuffled = ValueCritic::Create(shuffled_model.get(), options).value();
  ASSERT_TRUE(shuffled->Update(batch).ok());

  auto reordered_model = TinyValueModel(dir);
  auto reordered = ValueCritic::Create(reordered_model.get(), Options()).value();
  const std::vector<int64_t> order = EpochRowOrder(8, MixBits(21 + kGoldenGamma), 0);
  ValueBatch by_hand = batch;
  for (at::Tensor* tensor : {&by_hand.input_ids, &by_hand.attention_mask, &by_hand.position_ids,
                             &by_hand.response_mask, &by_hand.values, &by_hand.returns}) {
    *tensor = ReorderRows(*tensor, order);
  }
  ASSERT_TRUE(reordered->Update(by_hand).ok());
  const at::Tensor probe = shuffled->ComputeValues(batch, 4).value();
  EXPECT_TRUE(at::equal(probe, reordered->ComputeValues(batch, 4).value()));

  auto in_order_model = TinyValueModel(dir);
  auto in_order = ValueCritic::Create(in_order_model.get(), Options()).value();
  ASSERT_TRUE(in_order->Update(batch).ok());
  EXPECT_FALSE(at::equal(probe, in_order->ComputeValues(batch, 4).value()));
}

TEST(ValueCritic, BatchesThatDoNotFitAreErrors) {
  testing::TempDir dir;
  auto model = TinyValueModel(dir);
  auto critic = ValueCritic::Create(model.get(), Options()).value();
  ValueBatch batch = MakeBatch(4);
  EXPECT_THAT(critic->Update(batch).status().message(), ::testing::HasSubstr("values must be [4, 3]"));
  batch.values = at::zeros({4, kResponse});
  batch.returns = at::zeros({3, kResponse});
  EXPECT_THAT(critic->Update(batch).status().message(), ::testing::HasSubstr("returns must be [4, 3]"));
}

// The value loss checks its inputs once per mini-batch (deferred): NaN returns in the
// second mini-batch fail the update, naming them, after the first mini-batch's step.
TEST(ValueCritic, NonFiniteReturnsFailTheUpdateBeforeTheirMiniBatchSteps) {
  testing::TempDir dir;
  auto model = TinyValueModel(dir);
  auto critic = ValueCritic::Create(model.get(), Options()).value();
  ValueBatch batch = MakeBatch(8);
  batch.values = critic->ComputeValues(batch, 8).value();
  batch.returns[6][2] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(critic->Update(batch).status().message(),
              ::testing::HasSubstr("update_critic: returns: 1 NaN and 0 infinite values (first at [0, 2])"));
  EXPECT_EQ(critic->optimizer().states().front().step.item<float>(), 1.0f);
}

}  // namespace
}  // namespace rollout::workers
