// Packed forwards with shared prompts (models/shared_prompt_packing.h over
// models/packed_attention.h) against CausalLM::Forward on the padded batch, on the tiny
// Qwen2 fixture in float32 on the CPU (each segment attended on its own).
#include "models/shared_prompt_packing.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "models/causal_lm.h"

namespace rollout::models {
namespace {

constexpr char kFixture[] = "tests/data/tiny-qwen2";
constexpr int64_t kPrompt = 5, kResponse = 4;
const c10::Device kCpu(c10::kCPU);

std::unique_ptr<CausalLM> LoadFixture() {
  absl::StatusOr<std::unique_ptr<CausalLM>> model = CausalLM::Load(kFixture, LoadOptions());
  EXPECT_TRUE(model.ok()) << model.status();
  return std::move(model).value();
}

// verl's layout: row b has prompts[b] left-padded to kPrompt and a response of
// lengths[b] tokens right-padded to kResponse; position ids count the tokens.
struct Batch {
  at::Tensor input_ids, attention_mask, position_ids;
};

Batch MakeBatch(const std::vector<std::vector<int64_t>>& prompts, const std::vector<int64_t>& lengths) {
  const int64_t rows = static_cast<int64_t>(prompts.size());
  Batch batch;
  batch.input_ids = at::zeros({rows, kPrompt + kResponse}, at::kLong);
  batch.attention_mask = at::zeros({rows, kPrompt + kResponse}, at::kLong);
  for (int64_t b = 0; b < rows; ++b) {
    const int64_t pad = kPrompt - static_cast<int64_t>(prompts[b].size());
    for (size_t i = 0; i < prompts[b].size(); ++i) {
      batch.input_ids[b][pad + static_cast<int64_t>(i)] = prompts[b][i];
      batch.attention_mask[b][pad + static_cast<int64_t>(i)] = 1;
    }
    for (int64_t i = 0; i < lengths[b]; ++i) {
      batch.input_ids[b][kPrompt + i] = 10 + 7 * b + 3 * i;  // responses differ by row
      batch.attention_mask[b][kPrompt + i] = 1;
    }
  }
  batch.position_ids = (batch.attention_mask.cumsum(1) - 1).clamp_min(0);
  return batch;
}

// Rows 0-2 share a left-padded prompt, row 3 has its own unpadded one, rows 4-5 share a
// third; responses of 4, 2, 1, 3, 0 and 4 tokens.
Batch GroupedBatch() {
  const std::vector<int64_t> a = {5, 9, 14}, b = {3, 1, 4, 1, 5}, c = {2, 7, 1, 8};
  return MakeBatch({a, a, a, b, c, c}, {4, 2, 1, 3, 0, 4});
}

// The padded forward's hidden states that predict the response tokens, in the packing's
// score order: row b's position kPrompt - 1 + i for token i.
at::Tensor PaddedScoreHidden(const CausalLM& model, const Batch& batch, const at::Tensor& slots) {
  const at::Tensor hidden = model.Forward(batch.input_ids, batch.position_ids, batch.attention_mask);
  return hidden.narrow(1, kPrompt - 1, kResponse)
      .reshape({-1, hidden.size(2)})
      .index_select(0, slots);
}

std::optional<SharedPromptPacking> Pack(const Batch& batch) {
  return PackSharedPrompts(batch.input_ids, batch.attention_mask, batch.position_ids, kResponse,
                           kCpu);
}

// The packed forward's hidden states that predict the response tokens, in score order.
at::Tensor PackedScoreHidden(const CausalLM& model, SharedPromptPacking& packed) {
  return model.ForwardStep(packed.input_ids, packed.positions, packed.attention)
      .index_select(0, packed.score_rows);
}

TEST(SharedPromptPacking, ComputesEachPromptOnceWithoutPadding) {
  const Batch batch = GroupedBatch();
  const std::optional<SharedPromptPacking> packed = Pack(batch);
  ASSERT_TRUE(packed.has_value());
  EXPECT_EQ(packed->prompt_groups, 3);
  // Prompts 3 + 5 + 4 tokens, responses (4 - 1) + (2 - 1) + 0 + (3 - 1) + 0 + (4 - 1).
  EXPECT_EQ(packed->input_ids.size(0), 12 + 9);
  EXPECT_EQ(packed->attention.tokens(), 21);
  EXPECT_EQ(packed->score_rows.size(0), 4 + 2 + 1 + 3 + 0 + 4);
  // Segments: each prompt, and each response of at least two tokens.
  EXPECT_EQ(packed->attention.segments(), 3 + 4);
}

TEST(SharedPromptPacking, HiddenStatesMatchThePaddedForward) {
  const std::unique_ptr<CausalLM> model = LoadFixture();
  const Batch batch = GroupedBatch();
  std::optional<SharedPromptPacking> packed = Pack(batch);
  ASSERT_TRUE(packed.has_value());
  c10::NoGradGuard no_grad;
  const at::Tensor got = PackedScoreHidden(*model, *packed);
  const at::Tensor want = PaddedScoreHidden(*model, batch, packed->score_slots);
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_LT((got - want).abs().max().item<float>(), 1e-5);
  // The targets are the response tokens in the same order.
  const at::Tensor responses = batch.input_ids.narrow(1, kPrompt, kResponse).reshape({-1});
  EXPECT_TRUE(at::equal(packed->score_targets, responses.index_select(0, packed->score_slots)));
}

// Gradients reach every parameter as in the padded forward: a shared prompt's keys
// and values collect the gradients of all its rows.
TEST(SharedPromptPacking, GradientsMatchThePaddedForward) {
  const std::unique_ptr<CausalLM> model = LoadFixture();
  const Batch batch = GroupedBatch();
  std::optional<SharedPromptPacking> packed = Pack(batch);
  ASSERT_TRUE(packed.has_value());
  std::vector<std::pair<std::string, at::Tensor*>> params = model->NamedParameters();
  for (auto& [name, param] : params) param->set_requires_grad(true);
  const at::Tensor weights =
      at::randn({packed->score_rows.size(0), model->config().hidden_size},
                at::TensorOptions().dtype(at::kFloat));
  auto gradients = [&](const at::Tensor& hidden) {
    for (auto& [name, param] : params) param->mutable_grad() = at::Tensor();
    (hidden * weights).sum().backward();
    std::vector<at::Tensor> grads;
    for (auto& [name, param] : params) grads.push_back(param->grad().clone());
    return grads;
  };
  const std::vector<at::Tensor> got = gradients(PackedScoreHidden(*model, *packed));
  const std::vector<at::Tensor> want = gradients(PaddedScoreHidden(*model, batch, packed->score_slots));
  for (size_t i = 0; i < params.size(); ++i) {
    const float scale = std::max(want[i].abs().max().item<float>(), 1e-6f);
    EXPECT_LT((got[i] - want[i]).abs().max().item<float>() / scale, 1e-4) << params[i].first;
  }
  for (auto& [name, param] : params) param->set_requires_grad(false);
}

TEST(SharedPromptPacking, RowsOfAnotherShapeAreLeftToThePaddedForward) {
  Batch hole = GroupedBatch();
  hole.attention_mask[0][kPrompt - 2] = 0;  // a gap inside row 0's prompt
  EXPECT_FALSE(Pack(hole));
  Batch response_gap = GroupedBatch();
  response_gap.attention_mask[0][kPrompt + 1] = 0;  // row 0's response: token, gap, tokens
  EXPECT_FALSE(Pack(response_gap));
  const Batch no_prompt = MakeBatch({{}}, {3});  // nothing predicts the first response token
  EXPECT_FALSE(Pack(no_prompt));
}

}  // namespace
}  // namespace rollout::models
