// Fused SwiGLU, RoPE and add + RMSNorm kernels against the ATen formulation on the CPU (in float32 on
// the same inputs), values and gradients; float32 and bfloat16, with sizes that take
// the 16-byte packs and sizes that do not.
#include "models/fused_elementwise.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "common/torch_compat.h"
#include "models/grouped_linear.h"
#include "models/rope.h"

namespace rollout::models {
namespace {

// max |got - want| relative to max(1, max |want|).
float RelativeMaxDiff(const at::Tensor& got, const at::Tensor& want) {
  const at::Tensor g = got.cpu().to(at::kFloat), w = want.cpu().to(at::kFloat);
  return (g - w).abs().max().item<float>() / std::max(1.f, w.abs().max().item<float>());
}

// One bfloat16 rounding of the float32 result is 2^-8 of it; float32 differs by the
// order of operations only.
float Tolerance(c10::ScalarType dtype) { return dtype == at::kFloat ? 1e-5f : 1e-2f; }

struct Case {
  c10::ScalarType dtype;
  std::vector<int64_t> shape;
};

TEST(FusedSwiglu, MatchesSiluTimesUpWithGradients) {
  at::manual_seed(1);
  // 7 x 33: no whole packs; 6 x 64: 16-byte packs in both dtypes.
  for (const Case& c : {Case{at::kFloat, {7, 33}}, Case{at::kFloat, {6, 64}},
                        Case{at::kBFloat16, {7, 33}}, Case{at::kBFloat16, {6, 64}}}) {
    SCOPED_TRACE(::testing::Message() << c.dtype << " " << at::IntArrayRef(c.shape));
    const auto in = [&](double scale) { return (at::randn(c.shape) * scale).to(c.dtype).to(at::kFloat); };
    const at::Tensor gate = in(3), up = in(1), go = in(1);
    at::Tensor g_cpu = gate.clone().set_requires_grad(true), u_cpu = up.clone().set_requires_grad(true);
    const at::Tensor want = at::silu(g_cpu) * u_cpu;
    want.backward(go);
    at::Tensor g_gpu = gate.to(c.dtype).cuda().set_requires_grad(true);
    at::Tensor u_gpu = up.to(c.dtype).cuda().set_requires_grad(true);
    const at::Tensor got = FusedSwiglu(g_gpu, u_gpu);
    got.backward(go.to(c.dtype).cuda());
    EXPECT_EQ(got.scalar_type(), c.dtype);
    EXPECT_LT(RelativeMaxDiff(got, want), Tolerance(c.dtype));
    EXPECT_LT(RelativeMaxDiff(g_gpu.grad(), g_cpu.grad()), Tolerance(c.dtype));
    EXPECT_LT(RelativeMaxDiff(u_gpu.grad(), u_cpu.grad()), Tolerance(c.dtype));
  }
}

TEST(FusedRope, MatchesRotateHalfWithGradients) {
  at::manual_seed(2);
  // Head dims 16 (halves of 8: 16-byte packs in both dtypes) and 12 (halves of 6: none).
  for (const Case& c : {Case{at::kFloat, {2, 5, 3, 16}}, Case{at::kFloat, {2, 5, 3, 12}},
                        Case{at::kBFloat16, {2, 5, 3, 16}}, Case{at::kBFloat16, {2, 5, 3, 12}}}) {
    SCOPED_TRACE(::testing::Message() << c.dtype << " " << at::IntArrayRef(c.shape));
    const int64_t dim = c.shape.back();
    const Rope rope(dim, /*theta=*/10000.0, RopeScaling());
    const at::Tensor positions = at::arange(10, at::kLong).view({2, 5});
    auto [cos, sin] = rope.CosSin(positions, at::kFloat);  // [2, 5, dim]
    cos = cos.to(c.dtype).to(at::kFloat), sin = sin.to(c.dtype).to(at::kFloat);
    const at::Tensor x = at::randn(c.shape).to(c.dtype).to(at::kFloat);
    const at::Tensor go = at::randn(c.shape).to(c.dtype).to(at::kFloat);
    at::Tensor x_cpu = x.clone().set_requires_grad(true);
    const at::Tensor want = Rope::Apply(x_cpu, cos, sin);  // CPU: the ATen path
    want.backward(go);
    at::Tensor x_gpu = x.to(c.dtype).cuda().set_requires_grad(true);
    const at::Tensor got = Rope::Apply(x_gpu, cos.to(c.dtype).cuda(), sin.to(c.dtype).cuda());
    got.backward(go.to(c.dtype).cuda());
    EXPECT_EQ(got.scalar_type(), c.dtype);
    EXPECT_LT(RelativeMaxDiff(got, want), Tolerance(c.dtype));
    EXPECT_LT(RelativeMaxDiff(x_gpu.grad(), x_cpu.grad()), Tolerance(c.dtype));
  }
}

// gate and up as GroupedLinear gives them: column blocks of one product (read in place),
// whose gradients come back as the halves of one buffer.
TEST(FusedSwiglu, TakesTheHalvesOfAGroupedProjection) {
  at::manual_seed(3);
  const auto bf16 = at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16);
  const at::Tensor x_values = at::randn({2, 3, 64}).to(at::kBFloat16).to(at::kFloat);
  const at::Tensor w_values = (at::randn({128, 64}) * 0.1).to(at::kBFloat16).to(at::kFloat);
  const at::Tensor probe = at::randn({2, 3, 64}).to(at::kBFloat16).to(at::kFloat);
  LinearGroup group;
  group.weight = w_values.to(bf16);
  for (int64_t row : {0, 64}) {
    group.layer_weights.push_back(group.weight.narrow(0, row, 64).set_requires_grad(true));
  }
  const at::Tensor x = x_values.to(bf16).set_requires_grad(true);
  const std::vector<at::Tensor> gate_up = GroupedLinear(x, group);
  EXPECT_TRUE(IsColumnBlock(gate_up[0], 128) && !gate_up[0].is_contiguous());
  const at::Tensor got = FusedSwiglu(gate_up[0], gate_up[1]);
  (got.to(at::kFloat) * probe.cuda()).sum().backward();

  const at::Tensor x_ref = x_values.clone().set_requires_grad(true);
  const at::Tensor gate_w = w_values.narrow(0, 0, 64).clone().set_requires_grad(true);
  const at::Tensor up_w = w_values.narrow(0, 64, 64).clone().set_requires_grad(true);
  const at::Tensor want = at::silu(at::linear(x_ref, gate_w)) * at::linear(x_ref, up_w);
  (want * probe).sum().backward();
  EXPECT_LT(RelativeMaxDiff(got, want), 2e-2);
  EXPECT_LT(RelativeMaxDiff(x.grad(), x_ref.grad()), 2e-2);
  EXPECT_LT(RelativeMaxDiff(group.layer_weights[0].grad(), gate_w.grad()), 2e-2);
  EXPECT_LT(RelativeMaxDiff(group.layer_weights[1].grad(), up_w.grad()), 2e-2);
}

// Query heads that are a column block of a fused q/k/v product: tokens further apart
// than heads * dim.
TEST(FusedRope, TakesHeadsWithATokenStride) {
  at::manual_seed(4);
  const Rope rope(16, /*theta=*/10000.0, RopeScaling());
  const auto [cos, sin] = rope.CosSin(at::arange(10, at::kLong).view({2, 5}), at::kFloat);
  const at::Tensor qkv = at::randn({2, 5, 5 * 16});
  const at::Tensor go = at::randn({2, 5, 3, 16});
  at::Tensor qkv_cpu = qkv.clone().set_requires_grad(true);
  const at::Tensor want = Rope::Apply(qkv_cpu.narrow(-1, 0, 48).view({2, 5, 3, 16}), cos, sin);
  want.backward(go);
  at::Tensor qkv_gpu = qkv.cuda().set_requires_grad(true);
  const at::Tensor q = qkv_gpu.narrow(-1, 0, 48).view({2, 5, 3, 16});
  ASSERT_FALSE(q.is_contiguous());
  const at::Tensor got = Rope::Apply(q, cos.cuda(), sin.cuda());
  got.backward(go.cuda());
  EXPECT_LT(RelativeMaxDiff(got, want), 1e-5);
  EXPECT_LT(RelativeMaxDiff(qkv_gpu.grad(), qkv_cpu.grad()), 1e-5);
}

// {residual + delta, RMSNorm(residual + delta) * weight} and the gradients of both
// outputs for residual, delta and weight, against the ATen formulation on the CPU in
// float32: rows without whole packs (33), with packs (64), longer than a block's threads
// (float32 8200: three packs for some threads), more rows than the backward's blocks
// (1100), and without a delta.
TEST(DifferentiableAddRmsNorm, MatchesAddThenRmsNormWithGradients) {
  at::manual_seed(5);
  for (const Case& c : {Case{at::kFloat, {7, 33}}, Case{at::kFloat, {2, 3, 64}},
                        Case{at::kFloat, {3, 8200}}, Case{at::kBFloat16, {7, 33}},
                        Case{at::kBFloat16, {1100, 64}}}) {
    for (bool with_delta : {true, false}) {
      SCOPED_TRACE(::testing::Message() << c.dtype << " " << at::IntArrayRef(c.shape)
                                        << (with_delta ? " with delta" : " without delta"));
      const int64_t hidden = c.shape.back();
      const auto in = [&](const std::vector<int64_t>& shape, double scale, double shift) {
        return (at::randn(shape) * scale + shift).to(c.dtype).to(at::kFloat);
      };
      const at::Tensor residual = in(c.shape, 2, 0), delta = in(c.shape, 1, 0);
      const at::Tensor weight = in({hidden}, 0.2, 1);
      const at::Tensor go_sum = in(c.shape, 1, 0), go_normed = in(c.shape, 1, 0);

      at::Tensor r_cpu = residual.clone().set_requires_grad(true);
      at::Tensor d_cpu = delta.clone().set_requires_grad(true);
      at::Tensor w_cpu = weight.clone().set_requires_grad(true);
      const at::Tensor sum_want = with_delta ? r_cpu + d_cpu : r_cpu;
      const at::Tensor normed_want = compat::RmsNorm(sum_want, w_cpu, 1e-6);
      ((with_delta ? sum_want * go_sum : at::zeros({})) + normed_want * go_normed)
          .sum()
          .backward();

      at::Tensor r_gpu = residual.to(c.dtype).cuda().set_requires_grad(true);
      at::Tensor d_gpu = delta.to(c.dtype).cuda().set_requires_grad(true);
      at::Tensor w_gpu = weight.to(c.dtype).cuda().set_requires_grad(true);
      const auto [sum, normed] =
          DifferentiableAddRmsNorm(r_gpu, with_delta ? d_gpu : at::Tensor(), w_gpu, 1e-6);
      ((with_delta ? sum.to(at::kFloat) * go_sum.cuda() : at::zeros({}, at::kCUDA)) +
       normed.to(at::kFloat) * go_normed.cuda())
          .sum()
          .backward();

      EXPECT_EQ(normed.scalar_type(), c.dtype);
      EXPECT_LT(RelativeMaxDiff(sum, sum_want), Tolerance(c.dtype));
      EXPECT_LT(RelativeMaxDiff(normed, normed_want), Tolerance(c.dtype));
      EXPECT_LT(RelativeMaxDiff(r_gpu.grad(), r_cpu.grad()), Tolerance(c.dtype));
      if (with_delta) {
        EXPECT_LT(RelativeMaxDiff(d_gpu.grad(), d_cpu.grad()), Tolerance(c.dtype));
      }
      EXPECT_LT(RelativeMaxDiff(w_gpu.grad(), w_cpu.grad()), Tolerance(c.dtype));
    }
  }
}

// A frozen weight (LoRA training) gets no gradient; the others still do.
TEST(DifferentiableAddRmsNorm, FrozenWeightGetsNoGradient) {
  const at::Tensor residual = at::randn({4, 64}, at::kCUDA).set_requires_grad(true);
  const at::Tensor delta = at::randn({4, 64}, at::kCUDA).set_requires_grad(true);
  const at::Tensor weight = at::ones({64}, at::kCUDA);
  const auto [sum, normed] = DifferentiableAddRmsNorm(residual, delta, weight, 1e-6);
  normed.sum().backward();
  EXPECT_FALSE(weight.grad().defined());
  ASSERT_TRUE(residual.grad().defined());
  EXPECT_TRUE(at::equal(residual.grad(), delta.grad()));
}

}  // namespace
}  // namespace rollout::models
