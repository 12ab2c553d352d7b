#include "workers/adamw.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

#include <memory>

#include "workers/role_options.h"

namespace rollout::workers {
namespace {

// Expected values from PyTorch 1.13's torch.optim.AdamW (lr 0.1, betas (0.9, 0.999),
// eps 1e-8, weight_decay 0.01) on the same parameter and gradients.
TEST(AdamW, MatchesPyTorchOverTwoSteps) {
  at::Tensor param = at::tensor({2.0f, -1.0f, 0.5f}).set_requires_grad(true);
  AdamWOptions options;
  options.lr = 0.1;
  options.weight_decay = 0.01;
  AdamW optimizer({&param}, options);
  for (const std::vector<float>& grad : {std::vector<float>{0.1f, -0.2f, 0.3f},
                                         std::vector<float>{0.05f, 0.1f, -0.1f}}) {
    param.mutable_grad() = at::tensor(grad);
    optimizer.Step();
  }
  const at::Tensor want = at::tensor({1.8028841018676758f, -0.8714673519134521f, 0.35907864570617676f});
  EXPECT_TRUE(at::allclose(param.detach(), want, 1e-6, 1e-7)) << param;
}

// torch.optim.Adam (optim.optimizer: Adam): the decay enters the gradient before the
// moments. Expected values from PyTorch 1.13's torch.optim.Adam (lr 0.1, weight_decay 0.5,
// where AdamW ends at 1.6168, -0.7809, 0.3162); the gradients are left as they were.
TEST(AdamW, WithoutDecoupledWeightDecayMatchesTorchsAdam) {
  at::Tensor param = at::tensor({2.0f, -1.0f, 0.5f}).set_requires_grad(true);
  AdamWOptions options;
  options.lr = 0.1;
  options.weight_decay = 0.5;
  options.decoupled_weight_decay = false;
  AdamW optimizer({&param}, options);
  for (const std::vector<float>& grad : {std::vector<float>{0.1f, -0.2f, 0.3f},
                                         std::vector<float>{0.05f, 0.1f, -0.1f}}) {
    param.mutable_grad() = at::tensor(grad);
    optimizer.Step();
    EXPECT_TRUE(at::equal(param.grad(), at::tensor(grad)));
  }
  const at::Tensor want = at::tensor({1.800361156463623f, -0.8067820072174072f, 0.32075807452201843f});
  EXPECT_TRUE(at::allclose(param.detach(), want, 1e-6, 1e-7)) << param;
}

// optim.optimizer: torch's Adam adds the decay to the gradient; AdamW, Megatron's adam
// and the spelling adamw decouple it.
TEST(AdamW, OptionsFollowTheRecipesOptimizer) {
  config::OptimConfig optim;
  EXPECT_TRUE(AdamWFrom(optim).decoupled_weight_decay);
  for (const char* decoupled : {"AdamW", "adam", "adamw"}) {
    optim.set_optimizer(decoupled);
    EXPECT_TRUE(AdamWFrom(optim).decoupled_weight_decay) << decoupled;
  }
  optim.set_optimizer("Adam");
  optim.set_weight_decay(0.1);
  EXPECT_FALSE(AdamWFrom(optim).decoupled_weight_decay);
  EXPECT_EQ(AdamWFrom(optim).weight_decay, 0.1);
}

// Random weights of a trained model's scale (0.02) and bfloat16 gradients, for `steps`
// steps at lr 1e-6: the bfloat16 parameter and a float32 one stepped on the same
// gradients, which the former must equal rounded.
struct MixedPrecisionRun {
  explicit MixedPrecisionRun(int64_t size) {
    at::manual_seed(11);
    reference = (at::randn({size}) * 0.02).set_requires_grad(true);
    param = reference.detach().to(at::kBFloat16).set_requires_grad(true);
    reference.detach().copy_(param.detach());  // both start from the bfloat16 weights
    AdamWOptions options;
    options.lr = 1e-6;
    optimizer = std::make_unique<AdamW>(std::vector<at::Tensor*>{&param}, options);
    reference_optimizer = std::make_unique<AdamW>(std::vector<at::Tensor*>{&reference}, options);
  }
  void Steps(int steps) {
    for (int i = 0; i < steps; ++i) {
      const at::Tensor grad = at::randn(param.sizes()).to(at::kBFloat16);
      param.mutable_grad() = grad;
      reference.mutable_grad() = grad.to(at::kFloat);
      optimizer->Step();
      reference_optimizer->Step();
    }
  }
  at::Tensor param, reference;
  std::unique_ptr<AdamW> optimizer, reference_optimizer;
};

// verl's FSDP actor steps float32 weights and computes in bfloat16. Stepped in bfloat16
// itself, a weight of 0.02 (ulp 1.2e-4) would not move at lr 1e-6.
TEST(AdamW, Bfloat16ParametersStepThroughAFloat32Master) {
  MixedPrecisionRun run(4096);
  const at::Tensor start = run.param.detach().clone();
  run.Steps(20);
  const AdamW::State& state = run.optimizer->states()[0];
  EXPECT_EQ(state.master.scalar_type(), at::kFloat);
  EXPECT_EQ(state.exp_avg.scalar_type(), at::kFloat);
  EXPECT_EQ(state.exp_avg_sq.scalar_type(), at::kFloat);
  EXPECT_EQ(run.param.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(at::equal(state.master, run.reference.detach()));
  EXPECT_TRUE(at::equal(run.param.detach(), run.reference.detach().to(at::kBFloat16)));
  // 20 updates of ~1e-6 cross a rounding boundary for a fair share of the weights.
  const double moved = run.param.detach().ne(start).to(at::kFloat).mean().item<double>();
  EXPECT_GT(moved, 0.05) << "fraction of bfloat16 weights that changed";
}

// A write to the parameter between steps (a checkpoint's weights, a weight sync) is what
// the master goes on from, element by element; elements left alone keep their master.
TEST(AdamW, AMasterFollowsWritesToItsParameter) {
  MixedPrecisionRun run(64);
  run.Steps(3);
  c10::NoGradGuard no_grad;
  const at::Tensor written = at::full({32}, 0.5).to(at::kBFloat16);
  run.param.narrow(0, 0, 32).copy_(written);
  run.reference.narrow(0, 0, 32).copy_(written);
  run.Steps(3);
  EXPECT_TRUE(at::equal(run.optimizer->states()[0].master, run.reference.detach()));
  EXPECT_TRUE(at::equal(run.param.detach(), run.reference.detach().to(at::kBFloat16)));
}

// Micro-batch gradients add up in float32: 1/512 is below half a bfloat16 ulp of 1, so
// summed in bfloat16 it would vanish.
TEST(AdamW, WidenedGradientsAccumulateMicroBatchesInFloat32) {
  at::Tensor param = at::ones({4}, at::kBFloat16).set_requires_grad(true);
  AdamW optimizer({&param}, AdamWOptions());
  param.sum().backward();
  optimizer.WidenGradients();
  ASSERT_EQ(param.grad().scalar_type(), at::kFloat);
  (param * (1.0 / 512)).sum().backward();
  EXPECT_EQ(param.grad().scalar_type(), at::kFloat);
  EXPECT_TRUE(at::equal(param.grad(), at::full({4}, 1.0f + 1.0f / 512)));
  optimizer.WidenGradients();  // float32 already: kept
  EXPECT_TRUE(at::equal(param.grad(), at::full({4}, 1.0f + 1.0f / 512)));
  optimizer.Step();
  EXPECT_EQ(param.scalar_type(), at::kBFloat16);
}

TEST(AdamW, RestoredStatesKeepALowPrecisionParametersMasterOnly) {
  at::Tensor low = at::zeros({2}, at::kBFloat16).set_requires_grad(true);
  at::Tensor full = at::zeros({2}).set_requires_grad(true);
  AdamW optimizer({&low, &full}, AdamWOptions());
  auto state = [](at::ScalarType dtype) {
    return AdamW::State{at::zeros({2}, dtype), at::zeros({2}, dtype), at::ones({}), at::full({2}, 1e-3)};
  };
  ASSERT_TRUE(optimizer.RestoreStates({state(at::kBFloat16), state(at::kFloat)}).ok());
  EXPECT_EQ(optimizer.states()[0].exp_avg.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::equal(optimizer.states()[0].master, at::full({2}, 1e-3)));
  EXPECT_FALSE(optimizer.states()[1].master.defined());
  AdamW::State misshapen = state(at::kFloat);
  misshapen.master = at::zeros({3});
  EXPECT_FALSE(optimizer.RestoreStates({misshapen, state(at::kFloat)}).ok());
}

TEST(AdamW, ParametersWithoutGradientsStayPut) {
  at::Tensor trained = at::ones({2}).set_requires_grad(true);
  at::Tensor frozen = at::ones({2}).set_requires_grad(true);
  AdamW optimizer({&trained, &frozen}, AdamWOptions());
  trained.mutable_grad() = at::ones({2});
  optimizer.Step();
  EXPECT_FALSE(at::equal(trained.detach(), at::ones({2})));
  EXPECT_TRUE(at::equal(frozen.detach(), at::ones({2})));
  optimizer.ZeroGrad();
  EXPECT_FALSE(trained.grad().defined());
}

}  // namespace
}  // namespace rollout::workers
