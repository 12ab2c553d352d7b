// Activation checkpointing: a checkpointed piece runs twice (forward, then again in the
// backward pass) and gives the gradients it gives unchecked; the tiny Qwen2 fixture with
// its layers checkpointed gives the same output and trains with the same gradients, full
// or LoRA with dropout (the recomputation draws the same dropout masks), padded or over
// packed segments (each layer's attention runs again in the backward pass).
#include "models/activation_checkpoint.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "models/causal_lm.h"
#include "models/kv_cache.h"
#include "models/lora.h"
#include "models/packed_attention.h"

namespace rollout::models {
namespace {

constexpr char kFixture[] = "tests/data/tiny-qwen2";

TEST(Checkpointed, RecomputesThePieceInTheBackwardPassWithTheSameGradients) {
  const at::Tensor x = at::randn({3, 4}, at::TensorOptions().dtype(at::kDouble)).requires_grad_(true);
  const at::Tensor w = at::randn({4}, at::TensorOptions().dtype(at::kDouble)).requires_grad_(true);
  int calls = 0;
  auto piece = [&](const at::Tensor& in) {
    ++calls;
    return (in * w).sin().sum(1);
  };
  const at::Tensor checked = Checkpointed(piece, x * 2);
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(checked.grad_fn() == nullptr);
  checked.pow(2).sum().backward();
  EXPECT_EQ(calls, 2);
  const at::Tensor x_grad = x.grad().clone(), w_grad = w.grad().clone();
  x.mutable_grad() = at::Tensor();
  w.mutable_grad() = at::Tensor();
  piece(x * 2).pow(2).sum().backward();
  EXPECT_TRUE(at::allclose(x_grad, x.grad(), 1e-12, 1e-12));
  EXPECT_TRUE(at::allclose(w_grad, w.grad(), 1e-12, 1e-12));
}

TEST(Checkpointed, WithoutGradientsItIsThePiece) {
  c10::NoGradGuard no_grad;
  int calls = 0;
  const at::Tensor out = Checkpointed(
      [&](const at::Tensor& in) {
        ++calls;
        return in + 1;
      },
      at::zeros({2}));
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(at::equal(out, at::ones({2})));
  EXPECT_EQ(out.grad_fn(), nullptr);
}

// The gradients of the parameters `params` after `loss.backward()`.
std::map<std::string, at::Tensor> GradientsOf(const at::Tensor& loss,
                                              const std::vector<std::pair<std::string, at::Tensor*>>& params) {
  loss.backward();
  std::map<std::string, at::Tensor> grads;
  for (auto& [name, param] : params) {
    EXPECT_TRUE(param->grad().defined()) << name;
    if (param->grad().defined()) grads[name] = param->grad().clone();
  }
  return grads;
}

// The gradients of every parameter that trains, after one backward pass of a
// log-prob loss on a fixed batch (with adapter dropout drawn from seed 5). The mask's
// default leaves no padding.
std::map<std::string, at::Tensor> Gradients(CausalLM& model, const std::vector<std::pair<std::string, at::Tensor*>>& params,
                                            const at::Tensor& attention_mask = at::Tensor()) {
  for (auto& [name, param] : params) param->set_requires_grad(true);
  const at::Tensor ids = at::tensor({3, 17, 250, 9, 41, 100, 7, 12}, at::kLong).view({2, 4});
  const at::Tensor positions = at::arange(4, at::kLong).expand({2, 4});
  model.set_training(true);
  at::manual_seed(5);
  const at::Tensor logits = model.Logits(model.Forward(ids, positions, attention_mask));
  const at::Tensor log_probs = logits.narrow(1, 0, 3).log_softmax(-1).gather(-1, ids.narrow(1, 1, 3).unsqueeze(-1));
  std::map<std::string, at::Tensor> grads = GradientsOf(log_probs.sum(), params);
  model.set_training(false);
  return grads;
}

void ExpectSameGradients(const std::map<std::string, at::Tensor>& want, const std::map<std::string, at::Tensor>& got) {
  ASSERT_EQ(want.size(), got.size());
  for (const auto& [name, grad] : want) {
    EXPECT_TRUE(at::allclose(got.at(name), grad, 1e-5, 1e-7)) << name;
  }
}

TEST(ActivationCheckpointing, TheFullModelGetsTheSameGradients) {
  std::unique_ptr<CausalLM> plain = CausalLM::Load(kFixture, LoadOptions()).value();
  std::unique_ptr<CausalLM> checked = CausalLM::Load(kFixture, LoadOptions()).value();
  checked->set_activation_checkpointing(true);
  ExpectSameGradients(Gradients(*plain, plain->NamedParameters()), Gradients(*checked, checked->NamedParameters()));
}

// A row with a hole in it is attended under a padding mask, which the checkpointed layers
// use again in the backward pass.
TEST(ActivationCheckpointing, APaddingMaskGivesTheSameGradients) {
  const at::Tensor mask = at::tensor({1, 1, 0, 1, 1, 1, 1, 1}, at::kLong).view({2, 4});
  std::unique_ptr<CausalLM> plain = CausalLM::Load(kFixture, LoadOptions()).value();
  std::unique_ptr<CausalLM> checked = CausalLM::Load(kFixture, LoadOptions()).value();
  checked->set_activation_checkpointing(true);
  ExpectSameGradients(Gradients(*plain, plain->NamedParameters(), mask),
                      Gradients(*checked, checked->NamedParameters(), mask));
}

// Packed segments' attention, counting its calls and its copies' (shared).
class CountingAttention final : public KvCache {
 public:
  explicit CountingAttention(PackedSegmentAttention inner) : inner_(std::move(inner)) {}
  at::Tensor AppendAndAttend(int64_t layer, const at::Tensor& q, const at::Tensor& k,
                             const at::Tensor& v, double scale) override {
    ++*calls_;
    return inner_.AppendAndAttend(layer, q, k, v, scale);
  }
  std::shared_ptr<KvCache> RecomputationCopy() const override {
    return std::make_shared<CountingAttention>(*this);
  }
  int calls() const { return *calls_; }

 private:
  PackedSegmentAttention inner_;
  std::shared_ptr<int> calls_ = std::make_shared<int>(0);
};

// A prompt of 3 tokens as its own segment, then a response of 3 tokens that sees it.
CountingAttention PromptAndResponse() {
  return CountingAttention(PackedSegmentAttention({0, 3, 6}, {0, 3, 9}, {0, 1, 2, 0, 1, 2, 3, 4, 5},
                                                  c10::Device(c10::kCPU)));
}

TEST(ActivationCheckpointing, EachLayersAttentionRunsAgainInTheBackwardPass) {
  const at::Tensor ids = at::tensor({3, 17, 250, 9, 41, 100}, at::kLong);
  const at::Tensor positions = at::arange(6, at::kLong);
  std::map<std::string, at::Tensor> grads[2];
  at::Tensor hidden[2];
  for (bool checkpointing : {false, true}) {
    std::unique_ptr<CausalLM> model = CausalLM::Load(kFixture, LoadOptions()).value();
    const int layers = static_cast<int>(model->config().num_hidden_layers);
    model->set_activation_checkpointing(checkpointing);
    for (auto& [name, param] : model->NamedParameters()) param->set_requires_grad(true);
    auto attention = std::make_unique<CountingAttention>(PromptAndResponse());
    hidden[checkpointing] = model->ForwardStep(ids, positions, *attention);
    EXPECT_EQ(attention->calls(), layers);
    const at::Tensor log_probs = model->Logits(hidden[checkpointing].narrow(0, 2, 3))
                                     .log_softmax(-1)
                                     .gather(-1, ids.narrow(0, 3, 3).unsqueeze(-1));
    // The backward pass needs no cache of the caller's; the count outlives it.
    const std::shared_ptr<KvCache> counter = attention->RecomputationCopy();
    attention.reset();
    grads[checkpointing] = GradientsOf(log_probs.sum(), model->NamedParameters());
    EXPECT_EQ(static_cast<const CountingAttention&>(*counter).calls(),
              checkpointing ? 2 * layers : layers);
  }
  EXPECT_TRUE(at::equal(hidden[0], hidden[1]));
  ExpectSameGradients(grads[0], grads[1]);
}

TEST(ActivationCheckpointingDeathTest, ACacheThatStoresKeysIsRefused) {
  std::unique_ptr<CausalLM> model = CausalLM::Load(kFixture, LoadOptions()).value();
  model->set_activation_checkpointing(true);
  const TransformerConfig& c = model->config();
  DenseKvCache cache(c.num_hidden_layers, 1, c.num_key_value_heads, c.head_dim, 4, at::TensorOptions());
  cache.BeginStep(2);
  const at::Tensor ids = at::tensor({3, 17}, at::kLong);
  EXPECT_DEATH(model->ForwardStep(ids, at::arange(2, at::kLong), cache), "stores keys");
}

// Only the adapters train (the embedding is frozen, so the first checkpointed layer's input
// needs no gradient of its own), and their dropout masks must repeat.
TEST(ActivationCheckpointing, LoraWithDropoutGetsTheSameGradients) {
  LoraConfig lora;
  lora.options.rank = 4;
  lora.options.alpha = 8;
  lora.options.dropout = 0.3;
  lora.target_modules = {"all-linear"};
  std::map<std::string, at::Tensor> grads[2];
  for (bool checkpointing : {false, true}) {
    std::unique_ptr<CausalLM> model = CausalLM::Load(kFixture, LoadOptions()).value();
    ASSERT_TRUE(AddLoraAdapters(*model, lora, 3).ok());
    {
      c10::NoGradGuard no_grad;
      at::manual_seed(9);
      for (auto& [name, tensor] : NamedLoraParameters(*model)) {
        if (name.find("lora_B") != std::string::npos) tensor->normal_(0, 0.05);
      }
    }
    model->set_activation_checkpointing(checkpointing);
    grads[checkpointing] = Gradients(*model, NamedLoraParameters(*model));
  }
  ExpectSameGradients(grads[0], grads[1]);
}

}  // namespace
}  // namespace rollout::models
