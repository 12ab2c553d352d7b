// Scoring with shared prompts on CUDA (workers/response_scores.h): bfloat16 takes
// FlashAttention's variable-length kernel over packed segments, float32 attends each
// segment on its own; both against the padded forward, scores and gradients.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

#include <vector>

#include "models/causal_lm.h"
#include "models/packed_attention.h"
#include "models/presets.h"
#include "workers/response_scores.h"

namespace rollout::workers {
namespace {

constexpr int64_t kPrompt = 12, kResponse = 20, kRows = 16;

std::unique_ptr<models::CausalLM> Model(c10::ScalarType dtype) {
  models::LoadOptions options;
  options.device = c10::Device(c10::kCUDA, 0);
  options.dtype = dtype;
  return models::CausalLM::RandomInit(models::PresetConfig("tiny", 300).value(), 3, options);
}

struct Batch {
  at::Tensor input_ids, attention_mask, position_ids, responses;
};

// Two prompts (left-padded by 3 and 0 tokens), eight rows each, responses of 1 to 20
// tokens (right-padded).
Batch GroupedBatch() {
  at::manual_seed(4);
  Batch batch;
  batch.input_ids = at::randint(1, 300, {kRows, kPrompt + kResponse}, at::kLong);
  batch.attention_mask = at::ones({kRows, kPrompt + kResponse}, at::kLong);
  for (int64_t b = 0; b < kRows; ++b) {
    const int64_t first = b < 8 ? 0 : 8;
    batch.input_ids[b].narrow(0, 0, kPrompt).copy_(batch.input_ids[first].narrow(0, 0, kPrompt));
    if (b < 8) batch.attention_mask[b].narrow(0, 0, 3).zero_();
    const int64_t length = 1 + (b * 7) % kResponse;
    batch.attention_mask[b].narrow(0, kPrompt + length, kResponse - length).zero_();
  }
  batch.input_ids.masked_fill_(batch.attention_mask == 0, 0);
  batch.position_ids = (batch.attention_mask.cumsum(1) - 1).clamp_min(0);
  batch.responses = batch.input_ids.narrow(1, kPrompt, kResponse).clone();
  for (at::Tensor* t : {&batch.input_ids, &batch.attention_mask, &batch.position_ids, &batch.responses}) {
    *t = t->cuda();
  }
  return batch;
}

// Log-probs of the present response tokens and every parameter's gradient of their sum.
struct Scored {
  at::Tensor log_probs;
  std::vector<at::Tensor> gradients;
};

Scored Score(models::CausalLM& model, const Batch& batch, PromptSharing sharing) {
  auto params = model.NamedParameters();
  for (auto& [name, param] : params) {
    param->set_requires_grad(true);
    param->mutable_grad() = at::Tensor();
  }
  const models::TokenScores scores =
      ScoreResponses(model, batch.input_ids, batch.position_ids, batch.attention_mask,
                     batch.responses, models::kLogProbsOnly, 1.0, sharing);
  const at::Tensor present = batch.attention_mask.narrow(1, kPrompt, kResponse).to(at::kBool);
  const at::Tensor kept = scores.log_probs.masked_select(present);
  kept.sum().backward();
  Scored out{kept.detach().cpu(), {}};
  for (auto& [name, param] : params) {
    out.gradients.push_back(param->grad().to(at::kFloat).cpu());
    param->set_requires_grad(false);
  }
  return out;
}

void ExpectClose(const Scored& got, const Scored& want, float score_tolerance,
                 float gradient_tolerance) {
  EXPECT_LT((got.log_probs - want.log_probs).abs().max().item<float>(), score_tolerance);
  ASSERT_EQ(got.gradients.size(), want.gradients.size());
  for (size_t i = 0; i < got.gradients.size(); ++i) {
    const float scale = std::max(want.gradients[i].abs().max().item<float>(), 1e-6f);
    EXPECT_LT((got.gradients[i] - want.gradients[i]).abs().max().item<float>() / scale,
              gradient_tolerance)
        << "parameter " << i;
  }
}

TEST(ResponseScoresCuda, SharedPromptsInBFloat16TakeTheFlashKernelAndMatchPadded) {
  const auto model = Model(at::kBFloat16);
  ASSERT_TRUE(models::PackedSegmentAttention::UsesFlashKernel(model->device(), model->dtype(),
                                                              model->config().head_dim));
  const Batch batch = GroupedBatch();
  // bfloat16 activations: both paths round differently; log-probs are around -5.7.
  ExpectClose(Score(*model, batch, PromptSharing::kWhereFast),
              Score(*model, batch, PromptSharing::kNever), 5e-2f, 5e-2f);
}

TEST(ResponseScoresCuda, SharedPromptsInFloat32MatchPadded) {
  const auto model = Model(at::kFloat);
  const Batch batch = GroupedBatch();
  ExpectClose(Score(*model, batch, PromptSharing::kAlways),
              Score(*model, batch, PromptSharing::kNever), 1e-4f, 1e-3f);
}

}  // namespace
}  // namespace rollout::workers
