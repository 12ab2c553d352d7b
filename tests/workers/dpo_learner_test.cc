// DPO on a tiny model: against itself as reference the loss is log 2 with no margin,
// training separates chosen from rejected responses, and bad inputs are errors.
#include "workers/dpo_learner.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/workers/tiny_policy.h"
#include "workers/response_scores.h"
#include "workers/sft_learner.h"

namespace rollout::workers {
namespace {

using testing::AllParameters;
using testing::MakeBatch;
using testing::TinyModel;

DpoOptions Options() {
  DpoOptions options;
  options.plan.mini_batch_rows = 4;
  options.plan.micro_batch.rows = 2;
  options.lr_schedule.lr = 1e-2;
  return options;
}

// Pairs sharing prompts: the rejected responses are other random tokens. The reference
// log-probs come from forwards of as many rows as the update's micro-batches, so that
// against itself the policy's log-probs equal them to the bit: a BLAS may round a GEMM
// of other rows otherwise (OpenBLAS does), which would break the ties.
PreferenceBatch MakePairs(const models::CausalLM& model, int64_t rows = 4) {
  const int64_t micro_batch_rows = Options().plan.micro_batch.rows;
  PreferenceBatch pairs;
  pairs.chosen = MakeBatch(rows, true, 1);
  pairs.rejected = pairs.chosen;
  pairs.rejected.input_ids = pairs.chosen.input_ids.clone();
  pairs.rejected.input_ids.narrow(1, testing::kPrompt, testing::kResponse)
      .copy_(MakeBatch(rows, true, 2).responses);
  pairs.rejected.input_ids.masked_fill_(pairs.rejected.attention_mask == 0, 0);
  pairs.rejected.responses = pairs.rejected.input_ids.narrow(1, testing::kPrompt, testing::kResponse).clone();
  pairs.reference_chosen_logps = SequenceLogProbs(model, pairs.chosen, micro_batch_rows).value();
  pairs.reference_rejected_logps = SequenceLogProbs(model, pairs.rejected, micro_batch_rows).value();
  return pairs;
}

TEST(SequenceLogProbs, SumsTheMaskedResponseLogProbs) {
  auto model = TinyModel();
  const PolicyBatch batch = MakeBatch(5);
  const at::Tensor token = ScoreResponses(*model, batch.input_ids, batch.position_ids,
                                          batch.attention_mask, batch.responses, models::kLogProbsOnly)
                               .log_probs.detach();
  const at::Tensor expected = (token * batch.response_mask.to(at::kFloat)).sum(1);
  EXPECT_TRUE(at::allclose(SequenceLogProbs(*model, batch, 2).value(), expected, 1e-5, 1e-5));
}

TEST(DpoLearner, AgainstItselfTheLossIsLogTwo) {
  auto model = TinyModel();
  const PreferenceBatch pairs = MakePairs(*model);
  DpoOptions options = Options();
  options.lr_schedule.lr_warmup_steps = 1;  // lr 0 on the first update: nothing moves
  auto dpo = DpoLearner::Create(model.get(), AllParameters(*model), options).value();
  const auto metrics = dpo->Update(pairs).value();
  EXPECT_NEAR(metrics.at("train/loss"), std::log(2.0), 1e-5);
  EXPECT_NEAR(metrics.at("train/rewards/margins"), 0, 1e-6);
  EXPECT_EQ(metrics.at("train/rewards/accuracies"), 0);  // ties count as wrong
}

TEST(DpoLearner, TrainingPrefersTheChosenResponses) {
  auto model = TinyModel();
  const PreferenceBatch pairs = MakePairs(*model);
  auto dpo = DpoLearner::Create(model.get(), AllParameters(*model), Options()).value();
  std::map<std::string, double> metrics;
  for (int step = 0; step < 10; ++step) metrics = dpo->Update(pairs).value();
  EXPECT_LT(metrics.at("train/loss"), std::log(2.0));
  EXPECT_GT(metrics.at("train/rewards/margins"), 0);
  EXPECT_EQ(metrics.at("train/rewards/accuracies"), 1);
  const at::Tensor chosen = SequenceLogProbs(*model, pairs.chosen, 4).value();
  EXPECT_GT((chosen - pairs.reference_chosen_logps).mean().item<double>(),
            (SequenceLogProbs(*model, pairs.rejected, 4).value() - pairs.reference_rejected_logps)
                .mean()
                .item<double>());
}

// TRL's rpo_alpha: the DPO loss plus alpha x the chosen responses' token-mean NLL, which
// is SFT's loss on them.
TEST(DpoLearner, RpoAddsTheChosenResponsesNll) {
  auto model = TinyModel();
  const PreferenceBatch pairs = MakePairs(*model);
  DpoOptions options = Options();
  options.rpo_alpha = 0.5;
  auto dpo = DpoLearner::Create(model.get(), AllParameters(*model), options).value();
  const auto metrics = dpo->Evaluate(pairs, 4).value();
  SftOptions sft_options;
  sft_options.plan = options.plan;
  auto sft = SftLearner::Create(model.get(), AllParameters(*model), sft_options).value();
  const double nll = sft->Loss(pairs.chosen, 4).value();
  EXPECT_NEAR(metrics.at("val/nll_loss"), nll, 1e-5);
  EXPECT_NEAR(metrics.at("val/loss"), std::log(2.0) + 0.5 * nll, 1e-5);
  options.rpo_alpha = -1;
  EXPECT_THAT(DpoLearner::Create(model.get(), AllParameters(*model), options).status().message(),
              ::testing::HasSubstr("rpo_alpha is -1; must be >= 0"));
  EXPECT_EQ(DpoLearner::Create(model.get(), AllParameters(*model), Options()).value()->Evaluate(pairs, 4)->count(
                "val/nll_loss"),
            0u);
}

TEST(DpoLearner, BadInputsAreErrors) {
  auto model = TinyModel();
  PreferenceBatch pairs = MakePairs(*model);
  auto dpo = DpoLearner::Create(model.get(), AllParameters(*model), Options()).value();
  pairs.reference_rejected_logps = pairs.reference_rejected_logps.narrow(0, 0, 3);
  EXPECT_THAT(dpo->Update(pairs).status().message(),
              ::testing::HasSubstr("reference_rejected_logps must be [4]"));
  DpoOptions options = Options();
  options.loss.beta = -1;
  EXPECT_THAT(DpoLearner::Create(model.get(), AllParameters(*model), options).status().message(),
              ::testing::HasSubstr("beta"));
  EXPECT_THAT(DpoLearner::Create(model.get(), {}, Options()).status().message(),
              ::testing::HasSubstr("dpo: nothing to train"));
  options = Options();
  options.plan.micro_batch.max_tokens = 100;
  EXPECT_THAT(DpoLearner::Create(model.get(), AllParameters(*model), options).status().message(),
              ::testing::HasSubstr("dpo: micro-batches are counted in pairs"));
}

// The loss checks its inputs once per mini-batch (deferred): a NaN reference log-prob in
// the second mini-batch fails the update, naming it, after the first mini-batch's step.
TEST(DpoLearner, NonFiniteReferencesFailTheUpdateBeforeTheirMiniBatchSteps) {
  auto model = TinyModel();
  PreferenceBatch pairs = MakePairs(*model, 8);
  pairs.reference_rejected_logps[5] = std::numeric_limits<float>::quiet_NaN();
  auto dpo = DpoLearner::Create(model.get(), AllParameters(*model), Options()).value();
  EXPECT_THAT(dpo->Update(pairs).status().message(),
              ::testing::HasSubstr("dpo update: reference_rejected_logps: 1 NaN and 0 infinite values (first at [1])"));
  EXPECT_EQ(dpo->optimizer().states().front().step.item<float>(), 1.0f);
}

}  // namespace
}  // namespace rollout::workers
