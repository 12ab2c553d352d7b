// Additive attention masks: 0 where attention is allowed, the dtype's most negative
// finite value where not. Finite rather than -inf so that a query with no allowed key
// (a padding position) gets uniform weights instead of NaN, as in HF transformers.
#pragma once

#include <ATen/core/Tensor.h>

namespace rollout::models {

// The most negative finite value of `dtype` (float32, bfloat16 or float16).
double MaskedValue(c10::ScalarType dtype);

// attention_mask [B, T] (1 = token, 0 = padding) -> [B, 1, T, T] in `dtype`: query i
// sees key j when j <= i and j is a token.
at::Tensor CausalPaddingMask(const at::Tensor& attention_mask, c10::ScalarType dtype);

// key_allowed [B, K] bool -> [B, 1, 1, K] in `dtype`.
at::Tensor KeyPaddingMask(const at::Tensor& key_allowed, c10::ScalarType dtype);

}  // namespace rollout::models
