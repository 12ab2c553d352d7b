// GroupedLinear against one at::linear per layer: outputs and the gradients of the
// input, every layer weight and bias (float32 on the CPU).
#include "models/grouped_linear.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <vector>

namespace rollout::models {
namespace {

// Layers of widths 5, 3, 4 over K = 6 whose weights and biases are row blocks of one
// tensor each, as DecoderLayer holds q/k/v; each layer tensor is an autograd leaf.
struct Layers {
  LinearGroup group;

  explicit Layers(bool with_bias) {
    at::manual_seed(3);
    group.weight = at::randn({12, 6});
    if (with_bias) group.bias = at::randn({12});
    int64_t row = 0;
    for (int64_t width : {5, 3, 4}) {
      group.layer_weights.push_back(group.weight.narrow(0, row, width).set_requires_grad(true));
      if (with_bias) group.layer_biases.push_back(group.bias.narrow(0, row, width).set_requires_grad(true));
      row += width;
    }
  }

  // The same parameters as separate leaves, for the reference.
  std::vector<at::Tensor> Copies(const std::vector<at::Tensor>& tensors) const {
    std::vector<at::Tensor> out;
    for (const at::Tensor& t : tensors) out.push_back(t.detach().clone().set_requires_grad(true));
    return out;
  }
};

void ExpectClose(const at::Tensor& got, const at::Tensor& want) {
  ASSERT_TRUE(got.defined());
  ASSERT_TRUE(want.defined());
  EXPECT_TRUE(at::allclose(got, want, 1e-5, 1e-6)) << (got - want).abs().max();
}

TEST(GroupedLinear, MatchesOneLinearPerLayerWithGradients) {
  for (bool with_bias : {true, false}) {
    SCOPED_TRACE(with_bias);
    Layers layers(with_bias);
    const at::Tensor x = at::randn({2, 3, 6}).set_requires_grad(true);
    const at::Tensor x_ref = x.detach().clone().set_requires_grad(true);
    const std::vector<at::Tensor> w_ref = layers.Copies(layers.group.layer_weights);
    const std::vector<at::Tensor> b_ref = layers.Copies(layers.group.layer_biases);
    const std::vector<at::Tensor> got = GroupedLinear(x, layers.group);
    ASSERT_EQ(got.size(), 3u);
    at::Tensor loss = at::zeros({}), loss_ref = at::zeros({});
    for (size_t i = 0; i < 3; ++i) {
      const at::Tensor want = at::linear(x_ref, w_ref[i], with_bias ? b_ref[i] : at::Tensor());
      ExpectClose(got[i], want);
      const at::Tensor probe = at::randn(want.sizes());
      loss = loss + (got[i] * probe).sum();
      loss_ref = loss_ref + (want * probe).sum();
    }
    loss.backward();
    loss_ref.backward();
    ExpectClose(x.grad(), x_ref.grad());
    for (size_t i = 0; i < 3; ++i) {
      ExpectClose(layers.group.layer_weights[i].grad(), w_ref[i].grad());
      if (with_bias) ExpectClose(layers.group.layer_biases[i].grad(), b_ref[i].grad());
    }
  }
}

TEST(GroupedLinear, LeavesUnusedAndFrozenLayersWithoutGradients) {
  Layers layers(/*with_bias=*/true);
  layers.group.layer_weights[2].set_requires_grad(false);  // frozen
  const at::Tensor x = at::randn({4, 6});
  const std::vector<at::Tensor> out = GroupedLinear(x, layers.group);
  (out[0].sum() + out[2].sum()).backward();  // layer 1's output is not used
  EXPECT_TRUE(layers.group.layer_weights[0].grad().defined());
  EXPECT_FALSE(layers.group.layer_weights[1].grad().defined());
  EXPECT_FALSE(layers.group.layer_biases[1].grad().defined());
  EXPECT_FALSE(layers.group.layer_weights[2].grad().defined());
  ExpectClose(layers.group.layer_biases[2].grad(), at::full({4}, 4.0));
}

TEST(GroupedLinear, OutputsAreColumnBlocksOfOneProduct) {
  Layers layers(/*with_bias=*/false);
  const std::vector<at::Tensor> out = GroupedLinear(at::randn({2, 3, 6}), layers.group);
  for (const at::Tensor& t : out) EXPECT_TRUE(IsColumnBlock(t, 12));
  EXPECT_FALSE(IsColumnBlock(out[0], 5));
  EXPECT_TRUE(IsColumnBlock(at::randn({2, 3, 5}), 5));
  EXPECT_FALSE(IsColumnBlock(at::randn({5, 2}).t(), 5));
}

}  // namespace
}  // namespace rollout::models
