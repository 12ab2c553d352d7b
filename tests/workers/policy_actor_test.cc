// The actor on a tiny random model on CPU: log-probs equal a direct computation and do
// not depend on padding or micro-batching; gradient accumulation equals one big
// micro-batch; a token budget forms micro-batches by the rows it holds; shared prompts update like padded rows; an update moves the policy
// toward positive advantages; the first mini-batch may anchor its ratio to its own
// forward; metrics and errors as verl's actor reports them.
#include "workers/policy_actor.h"

#include <ATen/ATen.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "tests/workers/tiny_policy.h"

namespace rollout::workers {
namespace {

using ::testing::HasSubstr;
using testing::AllParameters;
using testing::kPrompt;
using testing::kResponse;
using testing::MakeBatch;
using testing::TinyModel;

PolicyActorOptions Options(int64_t mini, int64_t micro) {
  PolicyActorOptions options;
  options.plan.mini_batch_rows = mini;
  options.plan.micro_batch.rows = micro;
  options.lr_schedule.lr = 1e-2;
  options.adamw.weight_decay = 0;
  options.policy_loss.loss_agg_mode = "seq-mean-token-mean";
  return options;
}

TEST(PolicyActor, LogProbsEqualADirectComputation) {
  auto model = TinyModel();
  auto actor = PolicyActor::Create(model.get(), AllParameters(*model), Options(4, 4)).value();
  const PolicyBatch batch = MakeBatch(4, /*pad=*/false);
  const at::Tensor log_probs = actor->ComputeLogProbs(batch, 4, models::kLogProbsOnly).value().log_probs;
  const at::Tensor positions = at::arange(kPrompt + kResponse).expand({4, kPrompt + kResponse});
  const at::Tensor logits =
      model->Logits(model->Forward(batch.input_ids, positions, at::Tensor())).to(at::kFloat);
  const at::Tensor expected = logits.narrow(1, kPrompt - 1, kResponse)
                                  .log_softmax(-1)
                                  .gather(-1, batch.responses.unsqueeze(-1))
                                  .squeeze(-1);
  EXPECT_TRUE(at::allclose(log_probs, expected, 1e-5, 1e-5));
}

TEST(PolicyActor, LeftPaddingAndMicroBatchingDoNotChangeLogProbs) {
  auto model = TinyModel();
  auto actor = PolicyActor::Create(model.get(), AllParameters(*model), Options(6, 6)).value();
  const PolicyBatch batch = MakeBatch(6);
  const models::TokenScores whole = actor->ComputeLogProbs(batch, 6, models::kWithEntropy).value();
  const models::TokenScores one_by_one = actor->ComputeLogProbs(batch, 1, models::kWithEntropy).value();
  EXPECT_TRUE(at::allclose(whole.log_probs, one_by_one.log_probs, 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(whole.entropy, one_by_one.entropy, 1e-5, 1e-5));
  // Row 2 has two padding tokens; unpadded, the same tokens give the same log-probs.
  PolicyBatch row = SliceRows(batch, 2, 1);
  row.input_ids = row.input_ids.narrow(1, 2, kPrompt + kResponse - 2);
  row.attention_mask = at::ones_like(row.input_ids);
  row.position_ids = at::arange(kPrompt + kResponse - 2).unsqueeze(0);
  const at::Tensor unpadded = actor->ComputeLogProbs(row, 1, models::kLogProbsOnly).value().log_probs;
  EXPECT_TRUE(at::allclose(unpadded, whole.log_probs.narrow(0, 2, 1), 1e-5, 1e-5));
}

TEST(PolicyActor, GradientAccumulationEqualsOneMicroBatch) {
  // With eps far above every gradient, AdamW's first step is lr * g / eps = g: the
  // parameters move by exactly the accumulated gradient, so rounding noise in gradients
  // that are zero in exact arithmetic (k_proj biases) is not amplified to +-lr.
  PolicyActorOptions options = Options(4, 1);
  options.adamw.eps = 1e3;
  options.lr_schedule.lr = 1e3;
  options.plan.grad_clip = 1e9;
  auto accumulated_model = TinyModel();
  auto single_model = TinyModel();
  auto accumulated =
      PolicyActor::Create(accumulated_model.get(), AllParameters(*accumulated_model), options).value();
  options.plan.micro_batch.rows = 4;
  auto single = PolicyActor::Create(single_model.get(), AllParameters(*single_model), options).value();
  PolicyBatch batch = MakeBatch(8);
  batch.old_log_probs = single->ComputeLogProbs(batch, 8, models::kLogProbsOnly).value().log_probs;
  const auto accumulated_metrics = accumulated->Update(batch).value();
  const auto single_metrics = single->Update(batch).value();
  EXPECT_NEAR(accumulated_metrics.at("actor/grad_norm"), single_metrics.at("actor/grad_norm"), 1e-5);
  const auto a = accumulated_model->NamedParameters();
  const auto b = single_model->NamedParameters();
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(at::allclose(*a[i].second, *b[i].second, 1e-5, 1e-6)) << a[i].first;
  }
}

// verl's use_dynamic_bsz: a token budget that holds any two rows of MakeBatch but no
// three forms the micro-batches of two rows that micro_batch_rows = 2 forms, and updates
// the same; micro-batches of three update differently (the token-mean losses of other
// row sets), so the comparison can tell the partitions apart.
TEST(PolicyActor, TokenBudgetMicroBatchesUpdateAsTheRowsTheyHold) {
  const PolicyBatch batch = MakeBatch(6);
  auto update = [&](int64_t micro_rows, int64_t budget) {
    PolicyActorOptions options = Options(6, micro_rows);
    options.policy_loss.loss_agg_mode = "token-mean";
    options.plan.micro_batch.max_tokens = budget;
    auto model = TinyModel();
    auto actor = PolicyActor::Create(model.get(), AllParameters(*model), options).value();
    PolicyBatch with_old = batch;
    with_old.old_log_probs = actor->ComputeLogProbs(batch, 6, models::kLogProbsOnly).value().log_probs - 0.1;
    EXPECT_TRUE(actor->Update(with_old).ok());
    return model;
  };
  const auto two_rows = update(2, 0), budget = update(1, 2 * (kPrompt + kResponse)), three_rows = update(3, 0);
  const auto expected = two_rows->NamedParameters(), actual = budget->NamedParameters();
  const auto other = three_rows->NamedParameters();
  bool any_differs = false;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_TRUE(at::equal(*actual[i].second, *expected[i].second)) << expected[i].first;
    any_differs = any_differs || !at::allclose(*other[i].second, *expected[i].second, 1e-6, 1e-7);
  }
  EXPECT_TRUE(any_differs);
}

// Rows in runs of three with one prompt (GRPO's n = 3), padding included: an update
// through shared prompts moves every parameter as the padded one does, and reports the
// same metrics, with micro-batches that split a run (rows 0-1 | 2-3 | 4-5).
TEST(PolicyActor, SharedPromptsUpdateLikePaddedRows) {
  PolicyBatch batch = MakeBatch(6);
  for (int64_t b : {1, 2, 4, 5}) {
    const int64_t source = b < 3 ? 0 : 3;
    for (at::Tensor* column : {&batch.input_ids, &batch.attention_mask}) {
      column->select(0, b).narrow(0, 0, kPrompt).copy_(column->select(0, source).narrow(0, 0, kPrompt));
    }
  }
  batch.position_ids = (batch.attention_mask.cumsum(1) - 1).clamp_min(0);
  batch.input_ids.masked_fill_(batch.attention_mask == 0, 0);
  batch.responses = batch.input_ids.narrow(1, kPrompt, kResponse).clone();
  std::map<std::string, double> metrics[2];
  std::unique_ptr<models::CausalLM> models[2];
  for (int shared = 0; shared < 2; ++shared) {
    PolicyActorOptions options = Options(6, 2);
    // Parameters move by exactly the gradient (as in GradientAccumulationEqualsOneMicroBatch).
    options.adamw.eps = 1e3;
    options.lr_schedule.lr = 1e3;
    options.plan.grad_clip = 1e9;
    options.prompt_sharing = shared ? PromptSharing::kAlways : PromptSharing::kNever;
    options.use_kl_loss = true;
    models[shared] = TinyModel();
    auto actor = PolicyActor::Create(models[shared].get(), AllParameters(*models[shared]), options).value();
    PolicyBatch update = batch;
    update.old_log_probs = actor->ComputeLogProbs(batch, 4, models::kLogProbsOnly).value().log_probs - 0.1;
    update.ref_log_probs = update.old_log_probs + 0.05;
    metrics[shared] = actor->Update(update).value();
  }
  for (const char* name : {"actor/pg_loss", "actor/ppo_kl", "actor/entropy", "actor/kl_loss",
                           "actor/grad_norm", "actor/pg_clipfrac"}) {
    EXPECT_NEAR(metrics[1].at(name), metrics[0].at(name), 1e-5) << name;
  }
  const auto padded = models[0]->NamedParameters();
  const auto shared = models[1]->NamedParameters();
  for (size_t i = 0; i < padded.size(); ++i) {
    EXPECT_TRUE(at::allclose(*shared[i].second, *padded[i].second, 1e-5, 1e-6)) << padded[i].first;
  }
}

TEST(PolicyActor, UpdateMovesTowardPositiveAdvantages) {
  auto model = TinyModel();
  auto actor = PolicyActor::Create(model.get(), AllParameters(*model), Options(8, 4)).value();
  PolicyBatch batch = MakeBatch(8);
  const at::Tensor before = actor->ComputeLogProbs(batch, 8, models::kLogProbsOnly).value().log_probs;
  batch.old_log_probs = before;
  const auto metrics = actor->Update(batch).value();
  const at::Tensor change =
      ((actor->ComputeLogProbs(batch, 8, models::kLogProbsOnly).value().log_probs - before) * batch.response_mask)
          .sum(1);
  // Rows 0..3 have negative advantages, rows 4..7 positive.
  EXPECT_LT(change.narrow(0, 0, 2).max().item<double>(), 0);
  EXPECT_GT(change.narrow(0, 6, 2).min().item<double>(), 0);
  // On-policy first step: ratio 1, nothing clipped, pg_loss = -mean advantage = 0 here.
  EXPECT_NEAR(metrics.at("actor/pg_loss"), 0, 1e-6);
  EXPECT_EQ(metrics.at("actor/pg_clipfrac"), 0);
  EXPECT_NEAR(metrics.at("actor/ppo_kl"), 0, 1e-7);
  EXPECT_GT(metrics.at("actor/entropy"), 0);
  EXPECT_GT(metrics.at("actor/grad_norm"), 0);
  EXPECT_EQ(metrics.at("actor/lr"), 1e-2);
  EXPECT_EQ(metrics.count("actor/kl_loss"), 0u);
  EXPECT_EQ(actor->updates(), 1);
}

TEST(PolicyActor, KlLossIsReportedAndZeroAgainstItself) {
  auto model = TinyModel();
  PolicyActorOptions options = Options(4, 2);
  options.use_kl_loss = true;
  auto actor = PolicyActor::Create(model.get(), AllParameters(*model), options).value();
  PolicyBatch batch = MakeBatch(4);
  batch.old_log_probs = batch.ref_log_probs = actor->ComputeLogProbs(batch, 4, models::kLogProbsOnly).value().log_probs;
  const auto metrics = actor->Update(batch).value();
  EXPECT_NEAR(metrics.at("actor/kl_loss"), 0, 1e-6);
  EXPECT_EQ(metrics.at("actor/kl_coef"), 0.001);
  batch.ref_log_probs = at::Tensor();
  EXPECT_THAT(actor->Update(batch).status().message(), HasSubstr("ref_log_probs must be [4, 3]"));
}

TEST(PolicyActor, WarmupStartsAtLearningRateZero) {
  auto model = TinyModel();
  PolicyActorOptions options = Options(4, 4);
  options.lr_schedule.lr_warmup_steps = 2;
  auto actor = PolicyActor::Create(model.get(), AllParameters(*model), options).value();
  const at::Tensor embed_before = model->NamedParameters()[0].second->clone();
  PolicyBatch batch = MakeBatch(4);
  batch.old_log_probs = actor->ComputeLogProbs(batch, 4, models::kLogProbsOnly).value().log_probs;
  EXPECT_EQ(actor->Update(batch).value().at("actor/lr"), 0);
  EXPECT_TRUE(at::equal(*model->NamedParameters()[0].second, embed_before));
  EXPECT_EQ(actor->Update(batch).value().at("actor/lr"), 5e-3);
  EXPECT_FALSE(at::equal(*model->NamedParameters()[0].second, embed_before));
}

TEST(PolicyActor, BatchesThatDoNotFitAreErrors) {
  auto model = TinyModel();
  auto actor = PolicyActor::Create(model.get(), AllParameters(*model), Options(4, 2)).value();
  PolicyBatch batch = MakeBatch(4);
  batch.old_log_probs = at::zeros({4, kResponse + 1});
  EXPECT_THAT(actor->Update(batch).status().message(), HasSubstr("old_log_probs must be [4, 3]"));
  EXPECT_THAT(PolicyActor::Create(model.get(), {}, Options(0, 1)).status().message(),
              HasSubstr("must be >= 1"));
}

// The first mini-batch, trained before any optimizer step, anchored to the update's own
// forward (on_policy_rows): the same update as with its old log-probs scored beforehand,
// though its old_log_probs are NaN (which would fail the update if they were read).
// AdamW with eps far above every gradient moves the parameters by the gradient itself
// (as in GradientAccumulationEqualsOneMicroBatch), so rounding noise is not amplified.
TEST(PolicyActor, OnPolicyRowsUpdateAsWithTheirScoredOldLogProbs) {
  const PolicyBatch batch = MakeBatch(4);
  PolicyActorOptions options = Options(2, 1);
  options.adamw.eps = 1e3;
  options.lr_schedule.lr = 1e3;
  options.plan.grad_clip = 1e9;
  auto update = [&](int64_t on_policy_rows) {
    auto model = TinyModel();
    auto actor = PolicyActor::Create(model.get(), AllParameters(*model), options).value();
    PolicyBatch with_old = batch;
    with_old.old_log_probs = actor->ComputeLogProbs(batch, 4, models::kLogProbsOnly).value().log_probs;
    with_old.old_log_probs.narrow(0, 0, on_policy_rows).fill_(std::numeric_limits<float>::quiet_NaN());
    const auto metrics = actor->Update(with_old, on_policy_rows);
    EXPECT_TRUE(metrics.ok()) << metrics.status();
    return model;
  };
  const auto scored = update(0), anchored = update(2);
  const auto expected = scored->NamedParameters(), actual = anchored->NamedParameters();
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_TRUE(at::allclose(*actual[i].second, *expected[i].second, 1e-5, 1e-6)) << expected[i].first;
  }
}

TEST(PolicyActor, OnPolicyRowsBeyondTheFirstMiniBatchOfOneEpochAreErrors) {
  auto model = TinyModel();
  PolicyActorOptions options = Options(2, 1);
  auto one_epoch = PolicyActor::Create(model.get(), AllParameters(*model), options).value();
  options.plan.epochs = 2;
  auto two_epochs = PolicyActor::Create(model.get(), AllParameters(*model), options).value();
  options.plan.epochs = 1;
  options.plan.shuffle = true;  // the first mini-batch is no longer the first rows
  auto shuffled = PolicyActor::Create(model.get(), AllParameters(*model), options).value();
  PolicyBatch batch = MakeBatch(4);
  batch.old_log_probs = at::zeros({4, kResponse});
  EXPECT_THAT(one_epoch->Update(batch, 3).status().message(),
              HasSubstr("update_actor: 3 on-policy rows; at most 2 (the first mini-batch, and only "
                        "with ppo_epochs 1 (1) and shuffle off)"));
  EXPECT_THAT(two_epochs->Update(batch, 2).status().message(),
              HasSubstr("2 on-policy rows; at most 0"));
  EXPECT_THAT(shuffled->Update(batch, 1).status().message(), HasSubstr("1 on-policy rows; at most 0"));
}

// The losses check their inputs' finiteness once per mini-batch (deferred): a NaN in the
// second mini-batch's advantages still fails the update, naming it, and the weights keep
// the first mini-batch's step only.
TEST(PolicyActor, NonFiniteInputsFailTheUpdateBeforeTheirMiniBatchSteps) {
  auto model = TinyModel();
  auto actor = PolicyActor::Create(model.get(), AllParameters(*model), Options(2, 1)).value();
  PolicyBatch batch = MakeBatch(4);
  batch.old_log_probs = actor->ComputeLogProbs(batch, 4, models::kLogProbsOnly).value().log_probs;
  batch.advantages[3][1] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(actor->Update(batch).status().message(),
              HasSubstr("update_actor: advantages: 1 NaN and 0 infinite values (first at [0, 1])"));
  EXPECT_EQ(actor->optimizer().states().front().step.item<float>(), 1.0f);
}

}  // namespace
}  // namespace rollout::workers
