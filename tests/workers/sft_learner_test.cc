// SFT on a tiny model: the loss is the token-mean NLL of response tokens only,
// training on a batch drives it down, a non-finite loss fails the update, and both row
// layouts train alike.
#include "workers/sft_learner.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <utility>
#include <vector>

#include "tests/workers/tiny_policy.h"
#include "workers/response_scores.h"
#include "workers/sft_batch.h"

namespace rollout::workers {
namespace {

using testing::AllParameters;
using testing::MakeBatch;
using testing::kVocab;
using testing::TinyModel;

SftOptions Options(int64_t mini, int64_t micro) {
  SftOptions options;
  options.plan.mini_batch_rows = mini;
  options.plan.micro_batch.rows = micro;
  options.lr_schedule.lr = 1e-2;
  return options;
}

TEST(SftLearner, LossIsTheMeanNllOfResponseTokens) {
  auto model = TinyModel();
  auto sft = SftLearner::Create(model.get(), AllParameters(*model), Options(6, 2)).value();
  const PolicyBatch batch = MakeBatch(6);
  const at::Tensor log_probs = ScoreResponses(*model, batch.input_ids, batch.position_ids,
                                              batch.attention_mask, batch.responses, models::kLogProbsOnly)
                                   .log_probs.detach();
  const at::Tensor mask = batch.response_mask.to(at::kFloat);
  const double expected = (-(log_probs * mask).sum() / mask.sum()).item<double>();
  EXPECT_NEAR(sft->Loss(batch, 4).value(), expected, 1e-5);
  EXPECT_NEAR(sft->Loss(batch, 1).value(), expected, 1e-5);
}

TEST(SftLearner, TrainingDrivesTheLossDown) {
  auto model = TinyModel();
  auto sft = SftLearner::Create(model.get(), AllParameters(*model), Options(4, 2)).value();
  const PolicyBatch batch = MakeBatch(4);
  const double before = sft->Loss(batch, 4).value();
  std::map<std::string, double> metrics;
  for (int step = 0; step < 30; ++step) metrics = sft->Update(batch).value();
  EXPECT_LT(sft->Loss(batch, 4).value(), 0.25 * before);
  EXPECT_GT(metrics.at("train/grad_norm"), 0);
  EXPECT_EQ(metrics.at("train/lr"), 1e-2);
  EXPECT_LT(metrics.at("train/loss"), before);
}

TEST(SftLearner, BadInputsAreErrors) {
  auto model = TinyModel();
  auto sft = SftLearner::Create(model.get(), AllParameters(*model), Options(4, 2)).value();
  PolicyBatch batch = MakeBatch(4);
  batch.response_mask = batch.response_mask.narrow(0, 0, 3);
  EXPECT_THAT(sft->Update(batch).status().message(), ::testing::HasSubstr("response_mask must be [4, 3]"));
  EXPECT_THAT(sft->Loss(MakeBatch(4), 0).status().message(), ::testing::HasSubstr("micro-batch rows is 0"));
}

// A model that produces NaN log-probs fails the update, naming the loss, with no step
// taken (the loss's finiteness check is read before the mini-batch's optimizer step).
TEST(SftLearner, NonFiniteLossesFailTheUpdateWithoutAStep) {
  auto model = TinyModel();
  auto sft = SftLearner::Create(model.get(), AllParameters(*model), Options(4, 2)).value();
  {
    c10::NoGradGuard no_grad;
    AllParameters(*model).front()->fill_(std::numeric_limits<float>::quiet_NaN());
  }
  EXPECT_THAT(sft->Update(MakeBatch(4)).status().message(), ::testing::HasSubstr("sft update: loss_mat: "));
  EXPECT_FALSE(sft->optimizer().states().front().step.defined());
}

// The same rows in the two layouts sft_batch.h lays out, the parts padded to their
// lengths or the whole rows left-aligned (data.max_length), give the same loss and the
// same gradients: each counted token is scored from the same context.
TEST(SftLearner, WholeRowsLeftAlignedTrainAsThePartsLayout) {
  auto model = TinyModel();
  auto sft = SftLearner::Create(model.get(), AllParameters(*model), Options(3, 3)).value();
  at::manual_seed(5);
  std::vector<SftRowTokens> rows;
  for (const auto& [prompt_length, response_length] :
       std::vector<std::pair<int64_t, int64_t>>{{2, 5}, {6, 1}, {4, 3}}) {
    SftRowTokens row;
    for (int64_t t = 0; t < prompt_length; ++t) row.prompt.push_back(at::randint(1, kVocab, {1}).item<int32_t>());
    for (int64_t t = 0; t < response_length; ++t) {
      row.response.push_back(at::randint(1, kVocab, {1}).item<int32_t>());
      row.counted.push_back(t % 3 == 1 ? 0 : 1);  // a context-only reply token among the counted
    }
    rows.push_back(row);
  }
  const PolicyBatch parts = LayOutSftRows(rows, 6, 5, 0);
  const PolicyBatch whole = LayOutWholeSftRows(rows, 0);
  ASSERT_EQ(whole.input_ids.size(1), 7);
  ASSERT_EQ(parts.response_mask.sum().item<int64_t>(), whole.response_mask.sum().item<int64_t>());
  EXPECT_NEAR(sft->Loss(parts, 3).value(), sft->Loss(whole, 3).value(), 1e-5);
  const auto gradients = [&](const PolicyBatch& batch) {
    auto fresh = TinyModel();
    auto learner = SftLearner::Create(fresh.get(), AllParameters(*fresh), Options(3, 3)).value();
    learner->Update(batch).value();
    std::vector<at::Tensor> moments;
    for (const auto& state : learner->optimizer().states()) moments.push_back(state.exp_avg.clone());
    return moments;
  };
  const std::vector<at::Tensor> from_parts = gradients(parts);
  const std::vector<at::Tensor> from_whole = gradients(whole);
  ASSERT_EQ(from_parts.size(), from_whole.size());
  for (size_t i = 0; i < from_parts.size(); ++i) {
    EXPECT_TRUE(at::allclose(from_parts[i], from_whole[i], 1e-4, 1e-6)) << "parameter " << i;
  }
}

}  // namespace
}  // namespace rollout::workers
