// SFT on a tiny model: the loss is the token-mean NLL of response tokens only,
// training on a batch drives it down, and a non-finite loss fails the update.
#include "workers/sft_learner.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "tests/workers/tiny_policy.h"
#include "workers/response_scores.h"

namespace rollout::workers {
namespace {

using testing::AllParameters;
using testing::MakeBatch;
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
                                              batch.attention_mask, batch.responses, false)
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

}  // namespace
}  // namespace rollout::workers
