#include "models/kv_cache.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <optional>

#include "common/torch_compat.h"
#include "models/attention_mask.h"

namespace rollout::models {

DenseKvCache::DenseKvCache(int64_t layers, int64_t batch, int64_t kv_heads, int64_t head_dim,
                           int64_t capacity, const at::TensorOptions& options)
    : batch_(batch) {
  for (int64_t i = 0; i < layers; ++i) {
    keys_.push_back(at::zeros({batch, kv_heads, capacity, head_dim}, options));
    values_.push_back(at::zeros({batch, kv_heads, capacity, head_dim}, options));
  }
  key_allowed_ = at::ones({batch, capacity}, options.dtype(at::kBool));
}

void DenseKvCache::BeginStep(int64_t tokens_per_sequence, const at::Tensor& key_padding) {
  TORCH_CHECK(layers_done_ == 0 || layers_done_ == static_cast<int64_t>(keys_.size()),
              "DenseKvCache: a step began before the previous one went through every layer");
  length_ += step_tokens_;
  TORCH_CHECK(length_ + tokens_per_sequence <= keys_.front().size(2),
              "DenseKvCache: capacity ", keys_.front().size(2), " exceeded");
  step_tokens_ = tokens_per_sequence;
  layers_done_ = 0;
  if (key_padding.defined()) {
    key_allowed_.narrow(1, length_, tokens_per_sequence).copy_(key_padding);
    has_padding_ = has_padding_ || !key_padding.all().item<bool>();
  }
}

at::Tensor DenseKvCache::AppendAndAttend(int64_t layer, const at::Tensor& q, const at::Tensor& k,
                                         const at::Tensor& v, double scale) {
  const int64_t t = step_tokens_;
  // [B*T, H, D] -> [B, H, T, D]
  auto to_bhtd = [&](const at::Tensor& x) {
    return x.view({batch_, t, x.size(1), x.size(2)}).transpose(1, 2);
  };
  keys_[layer].narrow(2, length_, t).copy_(to_bhtd(k));
  values_[layer].narrow(2, length_, t).copy_(to_bhtd(v));
  const int64_t total = length_ + t;
  const at::Tensor keys = keys_[layer].narrow(2, 0, total);
  const at::Tensor values = values_[layer].narrow(2, 0, total);
  // Padding keys are masked for every query; causality within the step by the flag.
  std::optional<at::Tensor> mask;
  if (has_padding_) mask = KeyPaddingMask(key_allowed_.narrow(1, 0, total), q.scalar_type());
  at::Tensor out = compat::ScaledDotProductAttention(to_bhtd(q), keys, values, mask,
                                                     /*causal=*/true, scale);
  ++layers_done_;
  return out.transpose(1, 2).reshape({batch_ * t, q.size(1), q.size(2)});
}

}  // namespace rollout::models
