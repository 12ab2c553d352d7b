#include "models/attention_mask.h"

#include <ATen/ATen.h>

#include <limits>
#include <vector>

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

namespace {

// x [B, T, ...] gathered along dimension 1 by index [B, T].
at::Tensor GatherColumns(const at::Tensor& x, const at::Tensor& index) {
  std::vector<int64_t> shape(x.dim(), 1);
  shape[0] = index.size(0), shape[1] = index.size(1);
  return x.gather(1, index.to(x.device()).view(shape).expand(x.sizes()));
}

}  // namespace

std::optional<RowRotation> RowRotation::ForTokenRuns(const at::Tensor& attention_mask) {
  const at::Tensor tokens = attention_mask.to(at::kLong);
  const int64_t t = tokens.size(1);
  if (t == 0) return RowRotation(tokens, tokens, /*identity=*/true);
  // Runs of tokens in a row = the 0 -> 1 steps, counting a token in column 0 as one.
  const at::Tensor starts = tokens.narrow(1, 1, t - 1).gt(tokens.narrow(1, 0, t - 1)).sum(1) + tokens.select(1, 0);
  const at::Tensor leading = tokens.cumsum(1).eq(0).sum(1);  // [B]: padding before the run
  const at::Tensor flags = at::stack({starts.le(1).all(), leading.eq(0).all()}).cpu();
  if (!flags[0].item<bool>()) return std::nullopt;
  const at::Tensor columns = at::arange(t, tokens.options()).view({1, t});
  const at::Tensor shift = leading.view({-1, 1});
  return RowRotation((columns + shift).remainder(t), (columns - shift).remainder(t),
                     flags[1].item<bool>());
}

at::Tensor RowRotation::Apply(const at::Tensor& x) const { return GatherColumns(x, apply_index_); }

at::Tensor RowRotation::Undo(const at::Tensor& x) const { return GatherColumns(x, undo_index_); }

}  // namespace rollout::models
