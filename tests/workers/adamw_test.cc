#include "workers/adamw.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

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
