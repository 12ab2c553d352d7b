// Additive attention masks: 0 where attention is allowed, the dtype's most negative
// finite value where not. Finite rather than -inf so that a query with no allowed key
// (a padding position) gets uniform weights instead of NaN, as in HF transformers.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <utility>

namespace rollout::models {

// The most negative finite value of `dtype` (float32, bfloat16 or float16).
double MaskedValue(c10::ScalarType dtype);

// attention_mask [B, T] (1 = token, 0 = padding) -> [B, 1, T, T] in `dtype`: query i
// sees key j when j <= i and j is a token.
at::Tensor CausalPaddingMask(const at::Tensor& attention_mask, c10::ScalarType dtype);

// key_allowed [B, K] bool -> [B, 1, 1, K] in `dtype`.
at::Tensor KeyPaddingMask(const at::Tensor& key_allowed, c10::ScalarType dtype);

// A padded batch whose rows each hold one contiguous run of tokens (left padding, right
// padding or both: verl's prompt + response layout) needs no padding mask once every
// row is rotated so that its run starts at column 0: under plain causal attention a
// token then sees exactly the tokens before it in its run, and only padding positions
// see padding. Causal attention without a mask runs on the flash kernels (grouped
// heads natively), the masked one does not.
class RowRotation {
 public:
  // attention_mask [B, T] (1 = token, 0 = padding). nullopt when some row's tokens are
  // not one run (a hole); the caller then needs CausalPaddingMask. Synchronises with
  // the mask's device once (a two-value copy).
  static std::optional<RowRotation> ForTokenRuns(const at::Tensor& attention_mask);

  // Whether no row moves (no left padding): Apply and Undo would copy for nothing.
  bool identity() const { return identity_; }
  // x [B, T, ...] -> x with row b rotated left by its leading padding: column j takes
  // column (j + shift_b) mod T.
  at::Tensor Apply(const at::Tensor& x) const;
  // The inverse of Apply.
  at::Tensor Undo(const at::Tensor& x) const;

 private:
  RowRotation(at::Tensor apply_index, at::Tensor undo_index, bool identity)
      : apply_index_(std::move(apply_index)), undo_index_(std::move(undo_index)), identity_(identity) {}

  at::Tensor apply_index_;  // [B, T] int64: the source column of each column
  at::Tensor undo_index_;   // [B, T] int64
  bool identity_;
};

}  // namespace rollout::models
