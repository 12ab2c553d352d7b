// The inference forward's fused kernels (models/fused_decode.h) against the ATen
// formulation on the CPU, and CausalLM::ForwardStep with them (autograd off) against
// the same step without them (autograd on: the layer-by-layer path).
#include "models/fused_decode.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

#include "common/torch_compat.h"
#include "models/causal_lm.h"
#include "models/kv_cache.h"
#include "models/lora.h"
#include "models/presets.h"
#include "models/rope.h"
#include "models/split_k_linear.h"
#include "tests/support/tiny_qwen3.h"

namespace rollout::models {
namespace {

float MaxDiff(const at::Tensor& a, const at::Tensor& b) {
  return (a.cpu().to(at::kFloat) - b.cpu().to(at::kFloat)).abs().max().item<float>();
}

TEST(FusedAddRmsNorm, MatchesAddThenRmsNorm) {
  at::manual_seed(1);
  const at::Tensor residual = at::randn({5, 96}), delta = at::randn({5, 96}) * 2;
  const at::Tensor weight = at::rand({96}) + 0.5;
  const auto [sum, normed] = FusedAddRmsNorm(residual.cuda(), delta.cuda(), weight.cuda(), 1e-6);
  const at::Tensor want_sum = residual + delta;
  EXPECT_LT(MaxDiff(sum, want_sum), 1e-6);
  EXPECT_LT(MaxDiff(normed, compat::RmsNorm(want_sum, weight, 1e-6)), 1e-5);
  const auto [same, alone] = FusedAddRmsNorm(residual.cuda(), at::Tensor(), weight.cuda(), 1e-6);
  EXPECT_EQ(MaxDiff(same, residual), 0.f);
  EXPECT_LT(MaxDiff(alone, compat::RmsNorm(residual, weight, 1e-6)), 1e-5);
}

// Rows with a stride beyond their q/k/v (a wider projection's slice); values untouched.
TEST(FusedQkHeadRmsNorm, NormalisesEachQueryAndKeyHeadInPlace) {
  at::manual_seed(3);
  const int64_t q_heads = 4, kv_heads = 2, dim = 128, tokens = 5;
  const int64_t width = (q_heads + 2 * kv_heads) * dim;
  const at::Tensor wide = at::randn({tokens, width + 64}) * 3;
  const at::Tensor q_weight = at::rand({dim}) + 0.5, k_weight = at::rand({dim}) + 0.5;
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    SCOPED_TRACE(dtype);
    // The reference in float32 from the inputs as the kernel sees them.
    const at::Tensor heads = wide.to(dtype).to(at::kFloat).narrow(1, 0, width).view({tokens, -1, dim});
    const at::Tensor q_w = q_weight.to(dtype).to(at::kFloat), k_w = k_weight.to(dtype).to(at::kFloat);
    const at::Tensor want = at::cat({compat::RmsNorm(heads.narrow(1, 0, q_heads), q_w, 1e-6),
                                     compat::RmsNorm(heads.narrow(1, q_heads, kv_heads), k_w, 1e-6),
                                     heads.narrow(1, q_heads + kv_heads, kv_heads)},
                                    1)
                                 .view({tokens, width});
    const at::Tensor gpu_wide = wide.to(dtype).cuda();
    const at::Tensor gpu_qkv = gpu_wide.narrow(1, 0, width);
    FusedQkHeadRmsNorm_(gpu_qkv, q_weight.cuda(), k_weight.cuda(), q_heads, kv_heads, dim, 1e-6);
    EXPECT_LT(MaxDiff(gpu_qkv, want), dtype == at::kFloat ? 1e-5 : 3e-2);
    EXPECT_EQ(MaxDiff(gpu_wide.narrow(1, width, 64), wide.narrow(1, width, 64).to(dtype)), 0.f);
  }
}

TEST(FusedAddRmsNorm, RoundsTheSumBeforeNormalisingInBFloat16) {
  at::manual_seed(2);
  const at::Tensor residual = at::randn({4, 64}).to(at::kBFloat16);
  const at::Tensor delta = at::randn({4, 64}).to(at::kBFloat16);
  const at::Tensor weight = (at::rand({64}) + 0.5).to(at::kBFloat16);
  const auto [sum, normed] = FusedAddRmsNorm(residual.cuda(), delta.cuda(), weight.cuda(), 1e-6);
  const at::Tensor want_sum = residual + delta;  // bfloat16, rounded
  EXPECT_EQ(MaxDiff(sum, want_sum), 0.f);
  EXPECT_LT(MaxDiff(normed, compat::RmsNorm(want_sum, weight, 1e-6)), 2e-2);
}

// Partials summed in slice order, as the kernel sums them: ((p0 + p1) + p2) + ...
at::Tensor SumInOrder(const at::Tensor& partials) {
  at::Tensor total = partials[0].clone();
  for (int64_t s = 1; s < partials.size(0); ++s) total = total + partials[s];
  return total;
}

TEST(FusedAddPartialsRmsNorm, EqualsTheAddOfTheRoundedSumOfThePartials) {
  at::manual_seed(6);
  for (const int64_t hidden : {96, 100}) {  // 16-byte packs, and single elements
    SCOPED_TRACE(::testing::Message() << "hidden " << hidden);
    const at::Tensor residual = at::randn({5, hidden}).to(at::kBFloat16).cuda();
    const at::Tensor partials = (at::randn({3, 5, hidden}) * 4).cuda();
    const at::Tensor weight = (at::rand({hidden}) + 0.5).to(at::kBFloat16).cuda();
    const auto [sum, normed] = FusedAddPartialsRmsNorm(residual, partials, weight, 1e-6);
    const at::Tensor delta = SumInOrder(partials).to(at::kBFloat16);
    const auto [want_sum, want_normed] = FusedAddRmsNorm(residual, delta, weight, 1e-6);
    EXPECT_EQ(MaxDiff(sum, want_sum), 0.f);
    EXPECT_EQ(MaxDiff(normed, want_normed), 0.f);
  }
}

TEST(SplitKPartials, SlicesSumToTheProductAndEachIsItsSliceProduct) {
  at::manual_seed(7);
  const at::Tensor x = at::randn({6, 256}).to(at::kBFloat16).cuda();
  const at::Tensor weight = (at::randn({40, 256}) * 0.1).to(at::kBFloat16).cuda();
  const at::Tensor partials = SplitKPartials(x, weight, 4);
  ASSERT_EQ(partials.sizes(), (std::vector<int64_t>{4, 6, 40}));
  ASSERT_EQ(partials.scalar_type(), at::kFloat);
  const at::Tensor x32 = x.to(at::kFloat), w32 = weight.to(at::kFloat);
  EXPECT_LT(MaxDiff(partials.sum(0), at::matmul(x32, w32.t())), 1e-4);
  EXPECT_LT(MaxDiff(partials[2], at::matmul(x32.narrow(1, 128, 64), w32.narrow(1, 128, 64).t())),
            1e-5);
}

TEST(SplitKPartials, OnlyFewRowsAgainstALongInnerDimensionAreSplit) {
  EXPECT_EQ(SplitKSlices(256, 4864), 4);  // Qwen2.5-0.5B's down projection, decoding
  EXPECT_EQ(SplitKSlices(64, 4864), 1);    // a small batch
  EXPECT_EQ(SplitKSlices(8192, 4864), 1);  // a prefill chunk
  EXPECT_EQ(SplitKSlices(256, 896), 1);    // a short inner dimension
  EXPECT_EQ(SplitKSlices(256, 4100), 1);   // slices that would not stay 16-byte aligned
  EXPECT_THROW(SplitKPartials(at::zeros({2, 100}, at::kBFloat16).cuda(),
                              at::zeros({3, 100}, at::kBFloat16).cuda(), 4),
               c10::Error);
}

TEST(FusedRopeQk, MatchesRopeOfTheQueryAndKeyColumns) {
  at::manual_seed(3);
  const int64_t tokens = 6, q_heads = 4, kv_heads = 2, dim = 16;
  const Rope rope(dim, 10000.0, RopeScaling());
  const auto [cos, sin] = rope.CosSin(at::arange(tokens, at::kLong) * 7, at::kFloat);
  const at::Tensor qkv = at::randn({tokens, (q_heads + 2 * kv_heads) * dim});
  const auto [q, k] = FusedRopeQk(qkv.cuda(), cos.cuda(), sin.cuda(), q_heads, kv_heads, dim);
  const at::Tensor want_q = Rope::Apply(qkv.narrow(1, 0, q_heads * dim).view({tokens, q_heads, dim}), cos, sin);
  const at::Tensor want_k =
      Rope::Apply(qkv.narrow(1, q_heads * dim, kv_heads * dim).reshape({tokens, kv_heads, dim}), cos, sin);
  EXPECT_LT(MaxDiff(q, want_q), 1e-5);
  EXPECT_LT(MaxDiff(k, want_k), 1e-5);
}

TEST(FusedSwigluHalves, MatchesSiluOfTheGateTimesTheUpHalf) {
  at::manual_seed(4);
  const at::Tensor gate_up = at::randn({3, 2 * 40}) * 3;
  const at::Tensor want = at::silu(gate_up.narrow(1, 0, 40)) * gate_up.narrow(1, 40, 40);
  EXPECT_LT(MaxDiff(FusedSwigluHalves(gate_up.cuda()), want), 1e-5);
}

// silu(x gate^T) * (x up^T) in float32 from the bfloat16 operands, on the CPU.
at::Tensor GateUpSwigluReference(const at::Tensor& x, const at::Tensor& gate_up_weight) {
  const int64_t width = gate_up_weight.size(0) / 2;
  const at::Tensor products = at::matmul(x.cpu().to(at::kFloat),
                                         gate_up_weight.cpu().to(at::kFloat).t());
  return at::silu(products.narrow(1, 0, width)) * products.narrow(1, width, width);
}

TEST(FusedGateUpSwiglu, MatchesTheProductsSwigluOnHopper) {
  at::manual_seed(6);
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16).device(at::kCUDA);
  // Qwen2.5-0.5B's MLP and a small one; row counts of both tile widths (32 outputs up to
  // 128 rows, 64 above), on and off the 64-row tiles.
  for (const auto& [in, width] : {std::pair<int64_t, int64_t>{896, 4864}, {128, 192}}) {
    const at::Tensor weight = at::randn({2 * width, in}, bf16) * 0.05;
    for (const int64_t rows : {64, 100, 128, 160, 200, 256, 320}) {
      const at::Tensor x = at::randn({rows, in}, bf16);
      if (!FusedGateUpSwigluApplies(x, weight)) {
        GTEST_SKIP() << "needs a compute capability 9.0 GPU";
      }
      const at::Tensor got = FusedGateUpSwiglu(x, weight);
      ASSERT_EQ(got.sizes(), (std::vector<int64_t>{rows, width}));
      const at::Tensor want = GateUpSwigluReference(x, weight);
      // One bfloat16 rounding of each output (2^-8 relative) on float32 products.
      EXPECT_LT(MaxDiff(got, want), 5e-3 * want.abs().max().item<float>())
          << "in " << in << ", width " << width << ", rows " << rows;
      EXPECT_GT(got.abs().max().item<float>(), 0.f);
    }
  }
}

TEST(FusedGateUpSwiglu, AppliesOnlyToBFloat16InItsRowRange) {
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16).device(at::kCUDA);
  const at::Tensor weight = at::zeros({2 * 192, 128}, bf16);
  if (!FusedGateUpSwigluApplies(at::zeros({256, 128}, bf16), weight)) {
    GTEST_SKIP() << "needs a compute capability 9.0 GPU";
  }
  EXPECT_TRUE(FusedGateUpSwigluApplies(at::zeros({4, 64, 128}, bf16), weight));  // 256 rows
  EXPECT_TRUE(FusedGateUpSwigluApplies(at::zeros({64, 128}, bf16), weight));
  EXPECT_FALSE(FusedGateUpSwigluApplies(at::zeros({32, 128}, bf16), weight));  // cuBLAS wins
  EXPECT_FALSE(FusedGateUpSwigluApplies(at::zeros({512, 128}, bf16), weight));
  EXPECT_FALSE(FusedGateUpSwigluApplies(at::zeros({256, 128}, bf16).to(at::kHalf),
                                        weight.to(at::kHalf)));
  EXPECT_FALSE(FusedGateUpSwigluApplies(at::zeros({256, 96}, bf16), at::zeros({384, 96}, bf16)));
  EXPECT_FALSE(FusedGateUpSwigluApplies(at::zeros({256, 128}, bf16), at::zeros({2 * 160, 128}, bf16)));
  EXPECT_FALSE(FusedGateUpSwigluApplies(at::zeros({256, 128}), weight.to(at::kFloat)));
}

// Two prompt tokens then one decode step through a DenseKvCache; returns the hidden
// states of all three tokens.
at::Tensor ThreeSteps(const CausalLM& model) {
  const TransformerConfig& c = model.config();
  const auto longs = at::TensorOptions().dtype(at::kLong).device(model.device());
  DenseKvCache cache(c.num_hidden_layers, 2, c.num_key_value_heads, c.head_dim, 3,
                     at::TensorOptions().dtype(model.dtype()).device(model.device()));
  cache.BeginStep(2);
  const at::Tensor prompt = model.ForwardStep(at::tensor({279, 28, 290, 287}, longs),
                                              at::tensor({0, 1, 0, 1}, longs), cache);
  cache.BeginStep(1);
  const at::Tensor step = model.ForwardStep(at::tensor({223, 19}, longs), at::tensor({2, 2}, longs), cache);
  return at::cat({prompt, step});
}

TEST(CausalLmFusedStep, MatchesTheLayerByLayerStep) {
  LoadOptions options;
  options.device = c10::Device(c10::kCUDA, 0);
  const auto model = CausalLM::Load("tests/data/tiny-qwen2", options).value();
  at::Tensor fused;
  {
    c10::NoGradGuard no_grad;  // autograd off: fused kernels and groups
    fused = ThreeSteps(*model);
  }
  const at::Tensor layered = ThreeSteps(*model).detach();  // autograd on: layer by layer
  EXPECT_LT(MaxDiff(fused, layered), 1e-5);
  EXPECT_GT(fused.abs().max().item<float>(), 0.f);
}

// The hidden states of one prefill step of `batch` random `length`-token prompts,
// {with autograd off (fused kernels), with it on (layer by layer)}.
std::pair<at::Tensor, at::Tensor> FusedAndLayeredPrefill(const CausalLM& model, int64_t batch,
                                                         int64_t length) {
  const TransformerConfig& config = model.config();
  const auto longs = at::TensorOptions().dtype(at::kLong).device(model.device());
  const at::Tensor ids = at::randint(0, config.vocab_size, {batch * length}, longs);
  const at::Tensor positions = at::arange(length, longs).repeat({batch});
  auto prefill = [&] {
    DenseKvCache cache(config.num_hidden_layers, batch, config.num_key_value_heads,
                       config.head_dim, length,
                       at::TensorOptions().dtype(model.dtype()).device(model.device()));
    cache.BeginStep(length);
    return model.ForwardStep(ids, positions, cache);
  };
  at::Tensor fused;
  {
    c10::NoGradGuard no_grad;
    fused = prefill();
  }
  return {fused, prefill().detach()};
}

// The "tiny" preset with an MLP `intermediate_size` wide, random bfloat16 weights on the
// GPU.
auto TinyBFloat16Model(int64_t intermediate_size, uint64_t seed) {
  TransformerConfig config = PresetConfig("tiny", 300).value();
  config.intermediate_size = intermediate_size;
  LoadOptions options;
  options.device = c10::Device(c10::kCUDA, 0);
  options.dtype = at::kBFloat16;
  return CausalLM::RandomInit(config, seed, options);
}

// A long MLP inner dimension takes the split-K down projection in the fused step.
TEST(CausalLmFusedStep, MatchesTheLayerByLayerStepWithSplitKDownProjections) {
  const auto model = TinyBFloat16Model(4096, 11);
  const TransformerConfig& config = model->config();
  // One step of two 70-token prompts: 140 rows.
  const int64_t batch = 2, length = 70;
  ASSERT_GT(SplitKSlices(batch * length, config.intermediate_size), 1);
  const auto [fused, layered] = FusedAndLayeredPrefill(*model, batch, length);
  // bfloat16: the split-K delta is rounded once from float32 where cuBLAS's GEMM may
  // round differently, and the outputs (a few units) have ulps of 2^-7 to 2^-5.
  EXPECT_LT(MaxDiff(fused, layered), 0.02 * layered.abs().max().item<float>());
  EXPECT_GT(fused.abs().max().item<float>(), 0.f);
}

// A step of 256 rows with an MLP the fused gate/up + SwiGLU kernel takes (on Hopper).
TEST(CausalLmFusedStep, MatchesTheLayerByLayerStepWithTheGateUpSwigluKernel) {
  const auto model = TinyBFloat16Model(256, 12);
  const TransformerConfig& config = model->config();
  const int64_t batch = 4, length = 64;
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16).device(model->device());
  if (!FusedGateUpSwigluApplies(at::zeros({batch * length, config.hidden_size}, bf16),
                                at::zeros({2 * config.intermediate_size, config.hidden_size}, bf16))) {
    GTEST_SKIP() << "needs a compute capability 9.0 GPU";
  }
  const auto [fused, layered] = FusedAndLayeredPrefill(*model, batch, length);
  // The layer-by-layer path rounds gate and up to bfloat16 before the SwiGLU.
  EXPECT_LT(MaxDiff(fused, layered), 0.02 * layered.abs().max().item<float>());
  EXPECT_GT(fused.abs().max().item<float>(), 0.f);
}

// Qwen3's per-head q/k norms on the fused step's q/k/v group (FusedQkHeadRmsNorm_)
// against the layer-by-layer step's norms of q and k.
TEST(CausalLmFusedStep, NormsQwen3QueriesAndKeysAsTheLayerByLayerStep) {
  LoadOptions options;
  options.device = c10::Device(c10::kCUDA, 0);
  const auto model = testing::RandomQwen3(testing::TinyQwen3Config(300, /*head_dim=*/32), 13, options);
  at::Tensor fused;
  {
    c10::NoGradGuard no_grad;
    fused = ThreeSteps(*model);
  }
  const at::Tensor layered = ThreeSteps(*model).detach();
  EXPECT_LT(MaxDiff(fused, layered), 1e-5);
  EXPECT_GT(fused.abs().max().item<float>(), 0.f);
}

// LoRA rollouts (adapters enabled, not merged) keep the fused groups: each adapter's
// delta goes into its layer's columns of the group's output.
TEST(CausalLmFusedStep, AddsEnabledAdaptersToTheGroups) {
  LoadOptions options;
  options.device = c10::Device(c10::kCUDA, 0);
  const auto model = CausalLM::Load("tests/data/tiny-qwen2", options).value();
  LoraConfig lora;
  lora.options.rank = 4;
  lora.options.alpha = 8;
  ASSERT_TRUE(AddLoraAdapters(*model, lora, 7).ok());
  at::manual_seed(5);
  at::Tensor fused, without_adapters;
  {
    c10::NoGradGuard no_grad;
    for (auto& [name, tensor] : NamedLoraParameters(*model)) {
      if (name.find("lora_B") != std::string::npos) tensor->copy_(at::randn_like(*tensor) * 0.05);
    }
    fused = ThreeSteps(*model);
    model->set_adapters_enabled(false);
    without_adapters = ThreeSteps(*model);
    model->set_adapters_enabled(true);
  }
  const at::Tensor layered = ThreeSteps(*model).detach();
  EXPECT_LT(MaxDiff(fused, layered), 1e-5);
  EXPECT_GT(MaxDiff(fused, without_adapters), 1e-3);  // the adapters matter here
}

}  // namespace
}  // namespace rollout::models
