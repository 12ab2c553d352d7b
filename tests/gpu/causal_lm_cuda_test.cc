// The model's CUDA path (SDPA kernels, fused RMSNorm and token scores) against its CPU
// path on the tiny fixture, in float32.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "models/causal_lm.h"
#include "models/kv_cache.h"
#include "models/packed_attention.h"
#include "models/token_scores.h"

namespace rollout::models {
namespace {

constexpr char kFixture[] = "tests/data/tiny-qwen2";

std::unique_ptr<CausalLM> Load(c10::Device device) {
  LoadOptions options;
  options.device = device;
  return CausalLM::Load(kFixture, options).value();
}

const at::Tensor kIds = at::tensor({279, 28, 290, 287, 223, 19, 26, 23, 346, 223, 19, 20}, at::kLong);

TEST(CausalLmCuda, ForwardAndScoresMatchTheCpu) {
  c10::NoGradGuard no_grad;
  std::unique_ptr<CausalLM> cpu = Load(c10::Device(c10::kCPU));
  std::unique_ptr<CausalLM> gpu = Load(c10::Device(c10::kCUDA, 0));
  const at::Tensor ids = kIds.view({2, 6});
  const at::Tensor positions = at::arange(6, at::kLong).expand({2, 6});
  const at::Tensor want = cpu->Forward(ids, positions, at::Tensor());
  const at::Tensor got = gpu->Forward(ids.cuda(), positions.cuda(), at::Tensor()).cpu();
  EXPECT_LT((got - want).abs().max().item<float>(), 1e-4);
  const TokenScores cpu_scores = ScoreTokens(*cpu, want, ids, models::kWithEntropy);
  const TokenScores gpu_scores = ScoreTokens(*gpu, got.cuda(), ids.cuda(), models::kWithEntropy);
  EXPECT_LT((gpu_scores.log_probs.cpu() - cpu_scores.log_probs).abs().max().item<float>(), 1e-4);
  EXPECT_LT((gpu_scores.entropy.cpu() - cpu_scores.entropy).abs().max().item<float>(), 1e-4);
}

// With its layers checkpointed (the differentiable kernels run again in the backward
// pass), in bfloat16 as the actor trains: the plain model's output, bit for bit, and its
// gradients — padded, and over packed segments (FlashAttention's variable-length kernel,
// called again in the backward pass).
TEST(CausalLmCuda, ActivationCheckpointingGivesTheSameOutputAndGradients) {
  LoadOptions options;
  options.device = c10::Device(c10::kCUDA, 0);
  options.dtype = at::kBFloat16;
  for (bool packed : {false, true}) {
    std::map<std::string, at::Tensor> grads[2];
    at::Tensor hidden[2];
    for (bool checkpointing : {false, true}) {
      std::unique_ptr<CausalLM> model = CausalLM::Load(kFixture, options).value();
      model->set_activation_checkpointing(checkpointing);
      for (auto& [name, param] : model->NamedParameters()) param->set_requires_grad(true);
      const at::Tensor ids = kIds.cuda();
      at::Tensor log_probs;
      // Packed: a prompt of 6 tokens as its own segment and a response of 6 that sees it.
      PackedSegmentAttention attention({0, 6, 12}, {0, 6, 18},
                                       {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
                                       options.device);
      if (packed) {
        ASSERT_TRUE(PackedSegmentAttention::UsesFlashKernel(options.device, options.dtype,
                                                            model->config().head_dim));
        hidden[checkpointing] = model->ForwardStep(ids, at::arange(12, ids.options()), attention);
        log_probs = ScoreTokens(*model, hidden[checkpointing].narrow(0, 5, 6).unsqueeze(0),
                                ids.narrow(0, 6, 6).unsqueeze(0), models::kLogProbsOnly).log_probs;
      } else {
        const at::Tensor rows = ids.view({2, 6});
        hidden[checkpointing] = model->Forward(rows, at::arange(6, ids.options()).expand({2, 6}), at::Tensor());
        log_probs = ScoreTokens(*model, hidden[checkpointing].narrow(1, 0, 5), rows.narrow(1, 1, 5),
                                models::kLogProbsOnly).log_probs;
      }
      log_probs.sum().backward();
      for (auto& [name, param] : model->NamedParameters()) {
        ASSERT_TRUE(param->grad().defined()) << name;
        grads[checkpointing][name] = param->grad().to(at::kFloat).cpu();
      }
    }
    EXPECT_TRUE(at::equal(hidden[0], hidden[1])) << (packed ? "packed" : "padded");
    for (const auto& [name, grad] : grads[0]) {
      const float scale = 1 + grad.abs().max().item<float>();
      EXPECT_LT((grads[1].at(name) - grad).abs().max().item<float>(), 1e-2 * scale)
          << name << (packed ? " packed" : " padded");
    }
  }
}

TEST(CausalLmCuda, IncrementalDecodeMatchesFullForward) {
  c10::NoGradGuard no_grad;
  std::unique_ptr<CausalLM> gpu = Load(c10::Device(c10::kCUDA, 0));
  const TransformerConfig& c = gpu->config();
  const at::Tensor ids = kIds.cuda();
  const at::Tensor full =
      gpu->Forward(ids.view({1, 12}), at::arange(12, ids.options()).view({1, 12}), at::Tensor())[0];
  DenseKvCache cache(c.num_hidden_layers, 1, c.num_key_value_heads, c.head_dim, 12,
                     at::TensorOptions().device(at::kCUDA));
  cache.BeginStep(10);
  std::vector<at::Tensor> steps = {
      gpu->ForwardStep(ids.narrow(0, 0, 10), at::arange(10, ids.options()), cache)};
  for (int64_t i = 10; i < 12; ++i) {
    cache.BeginStep(1);
    steps.push_back(gpu->ForwardStep(ids.narrow(0, i, 1), at::full({1}, i, ids.options()), cache));
  }
  EXPECT_LT((at::cat(steps) - full).abs().max().item<float>(), 1e-4);
}

}  // namespace
}  // namespace rollout::models
