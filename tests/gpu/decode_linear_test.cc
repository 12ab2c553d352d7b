// The decode step's own GEMM (models/fused_decode.h DecodeLinear, DecodeLinearPartials)
// against float32 products of the same bfloat16 operands on the CPU.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <vector>

#include "models/fused_decode.h"

namespace rollout::models {
namespace {

float MaxDiff(const at::Tensor& a, const at::Tensor& b) {
  return (a.cpu().to(at::kFloat) - b.cpu().to(at::kFloat)).abs().max().item<float>();
}

at::TensorOptions Bf16() { return at::TensorOptions().dtype(at::kBFloat16).device(at::kCUDA); }

// x W^T (+ bias) in float32 from the bfloat16 operands, on the CPU.
at::Tensor ProductReference(const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& bias) {
  at::Tensor out = at::matmul(x.cpu().to(at::kFloat), weight.cpu().to(at::kFloat).t());
  if (bias.defined()) out = out + bias.cpu().to(at::kFloat);
  return out;
}

bool OnHopper() {
  return DecodeLinearApplies(at::zeros({256, 896}, Bf16()), at::zeros({896, 896}, Bf16()),
                             at::Tensor(), 1);
}

TEST(DecodeLinear, MatchesTheProductWithItsBiasOnHopper) {
  if (!OnHopper()) GTEST_SKIP() << "needs a compute capability 9.0 GPU";
  at::manual_seed(21);
  // Qwen2.5-0.5B's q/k/v (with bias) and o projections, and a small one; row counts of
  // both tile widths, on and off the 64-row tiles.
  struct Shape {
    int64_t in, out;
    bool bias;
  };
  for (const Shape shape : {Shape{896, 1152, true}, Shape{896, 896, false}, Shape{64, 128, true}}) {
    const at::Tensor weight = at::randn({shape.out, shape.in}, Bf16()) * 0.05;
    const at::Tensor bias = shape.bias ? at::randn({shape.out}, Bf16()) : at::Tensor();
    for (const int64_t rows : {64, 100, 200, 256, 320}) {
      SCOPED_TRACE(::testing::Message() << "in " << shape.in << ", out " << shape.out
                                        << ", rows " << rows);
      const at::Tensor x = at::randn({rows, shape.in}, Bf16());
      ASSERT_TRUE(DecodeLinearApplies(x, weight, bias, 1));
      const at::Tensor got = DecodeLinear(x, weight, bias);
      ASSERT_EQ(got.sizes(), (std::vector<int64_t>{rows, shape.out}));
      const at::Tensor want = ProductReference(x, weight, bias);
      // One bfloat16 rounding of each output (2^-8 relative) on float32 products.
      EXPECT_LT(MaxDiff(got, want), 5e-3 * want.abs().max().item<float>());
      EXPECT_GT(got.abs().max().item<float>(), 0.f);
    }
  }
}

TEST(DecodeLinear, KeepsTheLeadingDimensions) {
  if (!OnHopper()) GTEST_SKIP() << "needs a compute capability 9.0 GPU";
  at::manual_seed(22);
  const at::Tensor x = at::randn({4, 32, 128}, Bf16());
  const at::Tensor weight = at::randn({192, 128}, Bf16()) * 0.1;
  const at::Tensor got = DecodeLinear(x, weight, at::Tensor());
  ASSERT_EQ(got.sizes(), (std::vector<int64_t>{4, 32, 192}));
  const at::Tensor want = ProductReference(x.reshape({128, 128}), weight, at::Tensor());
  EXPECT_LT(MaxDiff(got.reshape({128, 192}), want), 5e-3 * want.abs().max().item<float>());
}

TEST(DecodeLinearPartials, EachSliceIsItsSliceProduct) {
  if (!OnHopper()) GTEST_SKIP() << "needs a compute capability 9.0 GPU";
  at::manual_seed(23);
  // Qwen2.5-0.5B's down projection in four slices, and a small product in two.
  struct Shape {
    int64_t in, out, slices;
  };
  for (const Shape shape : {Shape{4864, 896, 4}, Shape{256, 64, 2}}) {
    const at::Tensor weight = at::randn({shape.out, shape.in}, Bf16()) * 0.05;
    for (const int64_t rows : {64, 130, 256}) {
      SCOPED_TRACE(::testing::Message() << "in " << shape.in << ", rows " << rows);
      const at::Tensor x = at::randn({rows, shape.in}, Bf16());
      const at::Tensor got = DecodeLinearPartials(x, weight, shape.slices);
      ASSERT_EQ(got.sizes(), (std::vector<int64_t>{shape.slices, rows, shape.out}));
      ASSERT_EQ(got.scalar_type(), at::kFloat);
      const int64_t width = shape.in / shape.slices;
      for (int64_t s = 0; s < shape.slices; ++s) {
        const at::Tensor want = ProductReference(x.narrow(1, s * width, width),
                                                 weight.narrow(1, s * width, width), at::Tensor());
        // float32 sums in another order.
        EXPECT_LT(MaxDiff(got[s], want), 1e-4 * want.abs().max().item<float>()) << "slice " << s;
      }
    }
  }
}

TEST(DecodeLinear, AppliesOnlyToBFloat16DecodeSizes) {
  if (!OnHopper()) GTEST_SKIP() << "needs a compute capability 9.0 GPU";
  const at::Tensor x = at::zeros({256, 896}, Bf16());
  const at::Tensor weight = at::zeros({1152, 896}, Bf16());
  const at::Tensor bias = at::zeros({1152}, Bf16());
  EXPECT_TRUE(DecodeLinearApplies(x, weight, bias, 1));
  EXPECT_FALSE(DecodeLinearApplies(at::zeros({32, 896}, Bf16()), weight, bias, 1));   // few rows
  EXPECT_FALSE(DecodeLinearApplies(at::zeros({512, 896}, Bf16()), weight, bias, 1));  // many
  EXPECT_FALSE(DecodeLinearApplies(x.to(at::kHalf), weight.to(at::kHalf), at::Tensor(), 1));
  EXPECT_FALSE(DecodeLinearApplies(x, at::zeros({1000, 896}, Bf16()), at::Tensor(), 1));
  EXPECT_FALSE(DecodeLinearApplies(at::zeros({256, 100}, Bf16()), at::zeros({128, 100}, Bf16()),
                                   at::Tensor(), 1));
  EXPECT_FALSE(DecodeLinearApplies(x, weight, bias.to(at::kFloat), 1));
  EXPECT_FALSE(DecodeLinearApplies(x, weight, bias, 2));  // partials take no bias
  // A contiguous view 2 bytes into its storage: no tensor map can address it.
  const at::Tensor misaligned =
      at::zeros({256 * 896 + 1}, Bf16()).narrow(0, 1, 256 * 896).view({256, 896});
  EXPECT_FALSE(DecodeLinearApplies(misaligned, weight, bias, 1));
  // The down projection: 76 stages in one run are too long; four slices of 19 are not.
  const at::Tensor down_x = at::zeros({256, 4864}, Bf16());
  const at::Tensor down = at::zeros({896, 4864}, Bf16());
  EXPECT_FALSE(DecodeLinearApplies(down_x, down, at::Tensor(), 1));
  EXPECT_TRUE(DecodeLinearApplies(down_x, down, at::Tensor(), 4));
  EXPECT_FALSE(DecodeLinearApplies(down_x, down, at::Tensor(), 3));  // 4864 / 3 is not whole stages
  EXPECT_THROW(DecodeLinear(at::zeros({32, 896}, Bf16()), weight, bias), c10::Error);
}

TEST(DecodeLinear, SlicesOnlyLongInnerDimensions) {
  if (!OnHopper()) GTEST_SKIP() << "needs a compute capability 9.0 GPU";
  const at::Tensor hidden = at::zeros({896, 896}, Bf16());
  const at::Tensor down = at::zeros({896, 4864}, Bf16());
  EXPECT_EQ(DecodeLinearSlices(at::zeros({256, 896}, Bf16()), hidden), 1);  // 14 stages
  for (const int64_t rows : {64, 256}) {  // 76 stages: four runs of 19
    EXPECT_EQ(DecodeLinearSlices(at::zeros({rows, 4864}, Bf16()), down), 4) << rows << " rows";
  }
  EXPECT_EQ(DecodeLinearSlices(at::zeros({32, 4864}, Bf16()), down), 0);
  EXPECT_EQ(DecodeLinearSlices(at::zeros({256, 896}, Bf16()).to(at::kHalf), hidden.to(at::kHalf)),
            0);
}

}  // namespace
}  // namespace rollout::models
