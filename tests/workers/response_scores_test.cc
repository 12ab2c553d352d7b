// ScoreResponses with prompts shared (models/shared_prompt_packing.h) against the padded
// forward, on a tiny random model on the CPU.
#include "workers/response_scores.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

#include "tests/workers/tiny_policy.h"

namespace rollout::workers {
namespace {

// testing::MakeBatch's rows with rows 1-2 taking row 0's prompt and rows 4-5 row 3's
// (two groups of three, as GRPO's n = 3 gives them), padding included.
PolicyBatch GroupedBatch() {
  PolicyBatch batch = testing::MakeBatch(6);
  for (int64_t b : {1, 2, 4, 5}) {
    const int64_t source = b < 3 ? 0 : 3;
    for (at::Tensor* column : {&batch.input_ids, &batch.attention_mask}) {
      column->select(0, b).narrow(0, 0, testing::kPrompt)
          .copy_(column->select(0, source).narrow(0, 0, testing::kPrompt));
    }
  }
  batch.position_ids = (batch.attention_mask.cumsum(1) - 1).clamp_min(0);
  return batch;
}

TEST(ScoreResponses, SharedPromptsGiveThePaddedScores) {
  const auto model = testing::TinyModel();
  const PolicyBatch batch = GroupedBatch();
  c10::NoGradGuard no_grad;
  auto score = [&](PromptSharing sharing) {
    return ScoreResponses(*model, batch.input_ids, batch.position_ids, batch.attention_mask,
                          batch.responses, models::kWithEntropy, /*temperature=*/0.7, sharing);
  };
  const models::TokenScores shared = score(PromptSharing::kAlways);
  const models::TokenScores padded = score(PromptSharing::kNever);
  const at::Tensor present =
      batch.attention_mask.narrow(1, testing::kPrompt, testing::kResponse).to(at::kBool);
  ASSERT_EQ(shared.log_probs.sizes(), padded.log_probs.sizes());
  EXPECT_LT((shared.log_probs - padded.log_probs).masked_select(present).abs().max().item<float>(),
            1e-5);
  EXPECT_LT((shared.entropy - padded.entropy).masked_select(present).abs().max().item<float>(), 1e-5);
  // No token, no score.
  EXPECT_EQ(shared.log_probs.masked_select(present.logical_not()).abs().sum().item<float>(), 0.f);
  EXPECT_EQ(shared.entropy.masked_select(present.logical_not()).abs().sum().item<float>(), 0.f);
}

// Micro-batches of four rows split the second group (rows 3 | 4-5); each is packed on
// its own.
TEST(ScoreResponses, SharedPromptsInMicroBatchesGiveThePaddedScores) {
  const auto model = testing::TinyModel();
  const PolicyBatch batch = GroupedBatch();
  models::ScoreExtras extras = models::kWithEntropy;
  extras.sum_pi_squared = true;
  const absl::StatusOr<models::TokenScores> shared =
      ScoreResponsesNoGrad(*model, batch, 4, extras, 1.0, PromptSharing::kAlways);
  ASSERT_TRUE(shared.ok()) << shared.status();
  c10::NoGradGuard no_grad;
  const models::TokenScores padded =
      ScoreResponses(*model, batch.input_ids, batch.position_ids, batch.attention_mask,
                     batch.responses, extras, 1.0, PromptSharing::kNever);
  const at::Tensor present =
      batch.attention_mask.narrow(1, testing::kPrompt, testing::kResponse).to(at::kBool);
  EXPECT_LT((shared->log_probs - padded.log_probs).masked_select(present).abs().max().item<float>(),
            1e-5);
  EXPECT_LT((shared->entropy - padded.entropy).masked_select(present).abs().max().item<float>(), 1e-5);
  EXPECT_LT((shared->sum_pi_squared - padded.sum_pi_squared).masked_select(present).abs().max().item<float>(),
            1e-6);
  EXPECT_TRUE((padded.sum_pi_squared.masked_select(present) > 0).all().item<bool>());
}

// Where the flash kernel does not serve (float32 on the CPU), the default scores padded.
TEST(ScoreResponses, SharesPromptsByDefaultOnlyWhereFast) {
  const auto model = testing::TinyModel();
  const PolicyBatch batch = GroupedBatch();
  c10::NoGradGuard no_grad;
  const models::TokenScores by_default =
      ScoreResponses(*model, batch.input_ids, batch.position_ids, batch.attention_mask,
                     batch.responses, models::kLogProbsOnly);
  const models::TokenScores padded =
      ScoreResponses(*model, batch.input_ids, batch.position_ids, batch.attention_mask,
                     batch.responses, models::kLogProbsOnly, 1.0, PromptSharing::kNever);
  EXPECT_TRUE(at::equal(by_default.log_probs, padded.log_probs));
}

}  // namespace
}  // namespace rollout::workers
