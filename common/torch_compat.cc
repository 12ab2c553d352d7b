#include "common/torch_compat.h"

#include <limits>

namespace rollout::compat {
namespace {

at::Tensor RepeatKv(const at::Tensor& kv, int64_t groups) {
  return groups == 1 ? kv : kv.repeat_interleave(groups, /*dim=*/1);
}

at::Tensor CausalMask(int64_t tq, int64_t tk, const at::TensorOptions& options) {
  // Query i (of the last tq positions) may see keys [0, i + tk - tq].
  at::Tensor allowed = at::ones({tq, tk}, options.dtype(at::kBool)).tril(tk - tq);
  return at::zeros({tq, tk}, options).masked_fill(allowed.logical_not(),
                                                  -std::numeric_limits<float>::infinity());
}

at::Tensor MathAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                         const std::optional<at::Tensor>& additive_mask, bool causal,
                         double scale) {
  const int64_t groups = q.size(1) / k.size(1);
  at::Tensor scores = at::matmul(q.to(at::kFloat), RepeatKv(k, groups).to(at::kFloat).transpose(-2, -1)) * scale;
  if (causal) scores = scores + CausalMask(q.size(2), k.size(2), scores.options());
  if (additive_mask.has_value()) scores = scores + additive_mask->to(at::kFloat);
  at::Tensor weights = scores.softmax(-1);
  return at::matmul(weights, RepeatKv(v, groups).to(at::kFloat)).to(q.scalar_type());
}

}  // namespace

at::Tensor ScaledDotProductAttention(const at::Tensor& q, const at::Tensor& k,
                                     const at::Tensor& v,
                                     const std::optional<at::Tensor>& additive_mask, bool causal,
                                     double scale) {
#if TORCH_VERSION_MAJOR >= 2
  if (q.is_cuda()) {
    const int64_t groups = q.size(1) / k.size(1);
    c10::optional<at::Tensor> mask;
    if (additive_mask.has_value()) mask = *additive_mask;
    // The causal flag with Tq != Tk means "aligned to the end" only for Tq == 1 or
    // Tq == Tk in PyTorch's kernels; other shapes get an explicit mask.
    const bool kernel_causal = causal && q.size(2) == k.size(2) && !mask.has_value();
    if (causal && !kernel_causal) {
      at::Tensor causal_mask = CausalMask(q.size(2), k.size(2), q.options());
      mask = mask.has_value() ? *mask + causal_mask : causal_mask;
    }
    return at::scaled_dot_product_attention(q, RepeatKv(k, groups), RepeatKv(v, groups), mask,
                                            /*dropout_p=*/0.0, kernel_causal, scale);
  }
#endif
  return MathAttention(q, k, v, additive_mask, causal, scale);
}

}  // namespace rollout::compat
