// The attention state an incremental forward (CausalLM::ForwardStep) appends to and
// reads from. The caller owns it: the rollout engine implements a paged cache; the
// DenseKvCache here serves plain batched decoding (tests, scoring, `rollout generate`
// before the engine).
//
// A step processes N new tokens (flattened across sequences, in an order the cache
// was told about before the step); per layer the model hands over their rotated keys
// and values and gets back their attention outputs.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace rollout::models {

class KvCache {
 public:
  virtual ~KvCache() = default;
  // q [N, Hq, D], k/v [N, Hkv, D] of the step's tokens (RoPE applied to q and k).
  // Stores k/v and returns [N, Hq, D]: each token attends to its own sequence's
  // cached tokens and to the step's tokens of that sequence up to itself.
  virtual at::Tensor AppendAndAttend(int64_t layer, const at::Tensor& q, const at::Tensor& k,
                                     const at::Tensor& v, double scale) = 0;

  // The same from the unrotated fused projection, where the cache can rotate, store and
  // attend in one go for the current step: qkv [N, (Hq + 2 Hkv) D] (q, k and v heads
  // side by side, unit column stride), cos/sin [N, D] rotate-half tables in qkv's dtype.
  // Returns what AppendAndAttend returns for the rotated q and k, or an undefined tensor
  // (nothing stored) where it cannot; the caller then rotates and calls AppendAndAttend.
  virtual at::Tensor TryRotateAppendAndAttend(int64_t layer, const at::Tensor& qkv,
                                              const at::Tensor& cos, const at::Tensor& sin,
                                              double scale) {
    return at::Tensor();
  }

  // A copy that attends as this cache does, for activation checkpointing (CausalLM),
  // which runs each layer's attention again in the backward pass, possibly after this
  // cache is gone. nullptr where AppendAndAttend stores keys, so that a second call
  // would not repeat the first.
  virtual std::shared_ptr<KvCache> RecomputationCopy() const { return nullptr; }
};

// B sequences that advance together: each step adds the same number T of tokens to
// every sequence (N = B * T, sequence-major). Keys/values live in [B, Hkv, capacity, D]
// per layer. Prompts of unequal length are left-padded by the caller: the padded
// positions are masked out with `key_padding` (true = real token) at the first step.
class DenseKvCache final : public KvCache {
 public:
  DenseKvCache(int64_t layers, int64_t batch, int64_t kv_heads, int64_t head_dim,
               int64_t capacity, const at::TensorOptions& options);

  // Declares the next step: `tokens_per_sequence` new tokens each; `key_padding`
  // [B, T] bool (true = real token) or undefined when none are padding.
  void BeginStep(int64_t tokens_per_sequence, const at::Tensor& key_padding = at::Tensor());
  // Tokens stored per sequence after the step completes all layers.
  int64_t length() const { return length_; }

  at::Tensor AppendAndAttend(int64_t layer, const at::Tensor& q, const at::Tensor& k,
                             const at::Tensor& v, double scale) override;

 private:
  std::vector<at::Tensor> keys_;    // per layer [B, Hkv, capacity, D]
  std::vector<at::Tensor> values_;  // per layer [B, Hkv, capacity, D]
  at::Tensor key_allowed_;          // [B, capacity] bool
  bool has_padding_ = false;        // some key_allowed_ entry is false
  int64_t batch_;
  int64_t length_ = 0;              // tokens stored before the current step
  int64_t step_tokens_ = 0;
  int64_t layers_done_ = 0;
};

}  // namespace rollout::models
