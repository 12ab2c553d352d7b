#include "common/torch_compat.h"

#include <c10/core/GradMode.h>

#include <cmath>
#include <limits>
#include <tuple>

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
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
    // Without a mask the flash kernel serves grouped heads natively (enable_gqa), which
    // saves materialising the repeated keys/values and their gradients; the masked
    // (memory-efficient) kernel needs them repeated.
    if (!mask.has_value()) {
      return at::scaled_dot_product_attention(q, k, v, mask, /*dropout_p=*/0.0, kernel_causal,
                                              scale, /*enable_gqa=*/true);
    }
#endif
    return at::scaled_dot_product_attention(q, RepeatKv(k, groups), RepeatKv(v, groups), mask,
                                            /*dropout_p=*/0.0, kernel_causal, scale);
  }
#endif
  return MathAttention(q, k, v, additive_mask, causal, scale);
}

at::Tensor RmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  if (x.is_cuda()) return at::rms_norm(x, {x.size(-1)}, weight, eps);
#endif
  const at::Tensor x32 = x.to(at::kFloat);
  const at::Tensor normed = x32 * at::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return weight * normed.to(x.scalar_type());
}

void AdamStep(const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
              const std::vector<at::Tensor>& exp_avgs, const std::vector<at::Tensor>& exp_avg_sqs,
              const std::vector<at::Tensor>& steps, double lr, double beta1, double beta2, double eps,
              double weight_decay, bool decoupled_weight_decay) {
  c10::NoGradGuard no_grad;
  if (params.empty()) return;
#if TORCH_VERSION_MAJOR >= 2
  if (params.front().is_cuda()) {
    at::_foreach_add_(steps, 1);
    if (decoupled_weight_decay) {
      at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, lr,
                        beta1, beta2, weight_decay, eps, /*amsgrad=*/false, /*maximize=*/false);
    } else {
      at::_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, lr,
                       beta1, beta2, weight_decay, eps, /*amsgrad=*/false, /*maximize=*/false);
    }
    return;
  }
#endif
  for (size_t i = 0; i < params.size(); ++i) {
    steps[i].add_(1);
    const double step = steps[i].item<double>();
    const double bias_correction1 = 1.0 - std::pow(beta1, step);
    const double bias_correction2 = 1.0 - std::pow(beta2, step);
    at::Tensor grad = grads[i];
    if (decoupled_weight_decay) {
      params[i].mul_(1.0 - lr * weight_decay);
    } else if (weight_decay != 0) {
      grad = grad.add(params[i], weight_decay);
    }
    exp_avgs[i].lerp_(grad, 1.0 - beta1);
    exp_avg_sqs[i].mul_(beta2).addcmul_(grad, grad, 1.0 - beta2);
    const at::Tensor denom = (exp_avg_sqs[i].sqrt() / std::sqrt(bias_correction2)).add_(eps);
    params[i].addcdiv_(exp_avgs[i], denom, -lr / bias_correction1);
  }
}

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
bool VariableLengthAttentionAvailable() { return true; }

at::Tensor VariableLengthCausalAttention(const at::Tensor& q, const at::Tensor& k,
                                         const at::Tensor& v, const at::Tensor& q_offsets,
                                         const at::Tensor& k_offsets, int64_t max_q,
                                         int64_t max_k, double scale) {
  // FlashAttention aligns a causal segment's queries with the end of its keys.
  return std::get<0>(at::_flash_attention_forward(
      q, k, v, q_offsets, k_offsets, max_q, max_k, /*dropout_p=*/0.0, /*is_causal=*/true,
      /*return_debug_mask=*/false, scale));
}
#else
bool VariableLengthAttentionAvailable() { return false; }

at::Tensor VariableLengthCausalAttention(const at::Tensor& q, const at::Tensor&,
                                         const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                         int64_t, int64_t, double) {
  TORCH_CHECK(false, "variable-length attention of ", q.scalar_type(),
              " tensors needs LibTorch 2.5 or later");
}
#endif

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 8)
bool BmmToFloatAvailable() { return true; }

at::Tensor BmmToFloat(const at::Tensor& a, const at::Tensor& b) {
  return at::bmm(a, b, at::kFloat);
}
#else
bool BmmToFloatAvailable() { return false; }

at::Tensor BmmToFloat(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(false, "a batched GEMM with float32 output of ", a.scalar_type(),
              " inputs needs LibTorch 2.8 or later");
}
#endif

}  // namespace rollout::compat
