#include "models/attention_mask.h"

#include <ATen/ATen.h>

#include <limits>

namespace rollout::models {

double MaskedValue(c10::ScalarType dtype) {
  switch (dtype) {
    case at::kHalf: return static_cast<double>(std::numeric_limits<c10::Half>::lowest());
    case at::kBFloat16: return static_cast<double>(std::numeric_limits<c10::BFloat16>::lowest());
    default: return std::numeric_limits<float>::lowest();
  }
}

at::Tensor CausalPaddingMask(const at::Tensor& attention_mask, c10::ScalarType dtype) {
  const int64_t t = attention_mask.size(1);
  const at::Tensor causal = at::ones({t, t}, attention_mask.options().dtype(at::kBool)).tril();
  const at::Tensor keys = attention_mask.to(at::kBool).view({-1, 1, 1, t});
  const at::Tensor allowed = causal.view({1, 1, t, t}).logical_and(keys);
  return at::zeros(allowed.sizes(), attention_mask.options().dtype(dtype))
      .masked_fill(allowed.logical_not(), MaskedValue(dtype));
}

at::Tensor KeyPaddingMask(const at::Tensor& key_allowed, c10::ScalarType dtype) {
  const int64_t b = key_allowed.size(0);
  const int64_t k = key_allowed.size(1);
  return at::zeros({b, 1, 1, k}, key_allowed.options().dtype(dtype))
      .masked_fill(key_allowed.logical_not().view({b, 1, 1, k}), MaskedValue(dtype));
}

}  // namespace rollout::models
