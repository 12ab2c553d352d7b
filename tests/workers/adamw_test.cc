#include "workers/adamw.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

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
