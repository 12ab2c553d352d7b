// The optimizer on CUDA parameters (PyTorch's fused multi-tensor kernels) steps as its
// CPU loop does, for AdamW and for torch's Adam (decoupled_weight_decay false), and
// bfloat16 parameters through their float32 masters.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <vector>

#include "workers/adamw.h"

namespace rollout::workers {
namespace {

// Two parameters of different shapes, three steps of the same random gradients; the
// parameter `which` after them, or with `dtype` bfloat16 its float32 master.
at::Tensor StepsOf(const at::Device& device, bool decoupled_weight_decay, int64_t which,
                   at::ScalarType dtype = at::kFloat) {
  at::manual_seed(5);
  std::vector<at::Tensor> params = {at::randn({4, 3}), at::randn({7})};
  std::vector<std::vector<at::Tensor>> grads;
  for (int step = 0; step < 3; ++step) grads.push_back({at::randn({4, 3}), at::randn({7})});
  for (at::Tensor& param : params) param = param.to(device, dtype).set_requires_grad(true);
  AdamWOptions options;
  options.lr = 0.05;
  options.weight_decay = 0.3;
  options.decoupled_weight_decay = decoupled_weight_decay;
  AdamW optimizer({&params[0], &params[1]}, options);
  for (const std::vector<at::Tensor>& step_grads : grads) {
    for (size_t i = 0; i < params.size(); ++i) params[i].mutable_grad() = step_grads[i].to(device, dtype);
    optimizer.Step();
  }
  const size_t index = static_cast<size_t>(which);
  if (dtype == at::kFloat) return params[index].detach().cpu();
  EXPECT_TRUE(at::equal(params[index].detach(), optimizer.states()[index].master.to(dtype)));
  return optimizer.states()[index].master.cpu();
}

TEST(AdamWCuda, FusedStepsMatchTheCpuLoop) {
  for (const bool decoupled : {true, false}) {
    for (const int64_t which : {0, 1}) {
      const at::Tensor cpu = StepsOf(at::kCPU, decoupled, which);
      const at::Tensor gpu = StepsOf(at::kCUDA, decoupled, which);
      EXPECT_TRUE(at::allclose(gpu, cpu, 1e-5, 1e-6)) << "decoupled " << decoupled << "\n" << gpu << "\n" << cpu;
    }
  }
  // The two kinds of decay differ, so the comparison above tells them apart.
  EXPECT_FALSE(at::allclose(StepsOf(at::kCUDA, true, 0), StepsOf(at::kCUDA, false, 0), 1e-3, 1e-3));
}

TEST(AdamWCuda, Bfloat16MastersMatchTheCpuLoop) {
  for (const bool decoupled : {true, false}) {
    for (const int64_t which : {0, 1}) {
      const at::Tensor cpu = StepsOf(at::kCPU, decoupled, which, at::kBFloat16);
      const at::Tensor gpu = StepsOf(at::kCUDA, decoupled, which, at::kBFloat16);
      EXPECT_EQ(gpu.scalar_type(), at::kFloat);
      EXPECT_TRUE(at::allclose(gpu, cpu, 1e-5, 1e-6)) << "decoupled " << decoupled << "\n" << gpu << "\n" << cpu;
    }
  }
}

// LibTorch 2.x's autograd adds a bfloat16 micro-batch gradient into a widened float32
// one in place, on the GPU as on the CPU.
TEST(AdamWCuda, WidenedGradientsAccumulateInFloat32) {
  at::Tensor param = at::ones({4}, at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16))
                         .set_requires_grad(true);
  AdamW optimizer({&param}, AdamWOptions());
  param.sum().backward();
  optimizer.WidenGradients();
  (param * (1.0 / 512)).sum().backward();
  ASSERT_EQ(param.grad().scalar_type(), at::kFloat);
  EXPECT_TRUE(at::equal(param.grad().cpu(), at::full({4}, 1.0f + 1.0f / 512)));
}

}  // namespace
}  // namespace rollout::workers
