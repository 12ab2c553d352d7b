// CausalLM's kernel dispatch (the class is declared in causal_lm.h): which fused CUDA
// kernel serves each piece of a layer — without autograd on CUDA (FusedStep: the
// rollout's decode and prefill, the scoring passes) the grouped projections, fused
// add + RMSNorm, split-K partials and the gate/up + SwiGLU kernel; with autograd the
// differentiable fused kernels where they apply; elsewhere the plain LibTorch ops.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <utility>

#include "models/causal_lm.h"
#include "models/grouped_linear.h"

#ifdef ROLLOUT_WITH_CUDA
#include "models/fused_decode.h"
#include "models/fused_elementwise.h"
#include "models/split_k_linear.h"
#endif

namespace rollout::models {

bool CausalLM::FusedStep(const at::Tensor& x) const {
#ifdef ROLLOUT_WITH_CUDA
  return x.is_cuda() && !at::GradMode::is_enabled();
#else
  (void)x;
  return false;
#endif
}

bool CausalLM::UsesGroup(std::initializer_list<const Linear*> linears, const at::Tensor& weight,
                         const at::Tensor& bias) const {
  for (const Linear* linear : linears) {
    if (linear->has_adapter() && adapters_enabled_ && training_) return false;
    if (!linear->ProductWeight(adapters_enabled_).is_alias_of(weight)) return false;
    if (linear->bias().defined() != bias.defined()) return false;
    if (bias.defined() && !linear->bias().is_alias_of(bias)) return false;
  }
  return true;
}

at::Tensor CausalLM::ProjectGroup(std::initializer_list<const Linear*> linears,
                                  const at::Tensor& weight, const at::Tensor& bias,
                                  const at::Tensor& x) const {
  at::Tensor out = StepProduct(x, weight, bias);  // [N, sum of the layers' widths]
  int64_t column = 0;
  for (const Linear* linear : linears) {
    const int64_t width = linear->weight().size(0);
    if (linear->PlainWeight(adapters_enabled_) == nullptr) {
      out.narrow(-1, column, width).add_(linear->AdapterTerm(x, /*training=*/false));
    }
    column += width;
  }
  return out;
}

at::Tensor CausalLM::StepProduct(const at::Tensor& x, const at::Tensor& weight,
                                 const at::Tensor& bias) const {
#ifdef ROLLOUT_WITH_CUDA
  if (FusedStep(x) && DecodeLinearApplies(x, weight, bias, 1)) return DecodeLinear(x, weight, bias);
#endif
  return at::linear(x, weight, bias);
}

std::pair<at::Tensor, at::Tensor> CausalLM::AddRmsNorm(const at::Tensor& residual,
                                                       const at::Tensor& delta,
                                                       const at::Tensor& weight) const {
#ifdef ROLLOUT_WITH_CUDA
  if (FusedStep(residual)) return FusedAddRmsNorm(residual, delta, weight, config_.rms_norm_eps);
  if (DifferentiableAddRmsNormSupports(residual)) {
    return DifferentiableAddRmsNorm(residual, delta, weight, config_.rms_norm_eps);
  }
#endif
  const at::Tensor sum = delta.defined() ? residual + delta : residual;
  return {sum, RmsNorm(sum, weight)};
}

std::pair<at::Tensor, at::Tensor> CausalLM::AddProjectedRmsNorm(const at::Tensor& residual,
                                                                const Linear& linear,
                                                                const at::Tensor& x,
                                                                const at::Tensor& weight) const {
#ifdef ROLLOUT_WITH_CUDA
  const at::Tensor* plain = linear.PlainWeight(adapters_enabled_);
  const bool half = x.scalar_type() == at::kBFloat16 || x.scalar_type() == at::kHalf;
  if (FusedStep(x) && half && plain != nullptr && !linear.bias().defined()) {
    const int64_t in = x.size(-1);
    const at::Tensor rows = x.reshape({-1, in}).contiguous();
    if (const int64_t slices = DecodeLinearSlices(rows, *plain); slices == 1) {
      return AddRmsNorm(residual, DecodeLinear(x, *plain, at::Tensor()), weight);
    } else if (slices > 1) {
      return FusedAddPartialsRmsNorm(residual, DecodeLinearPartials(rows, *plain, slices), weight,
                                     config_.rms_norm_eps);
    }
    if (const int64_t slices = SplitKSlices(rows.size(0), in); slices > 1) {
      return FusedAddPartialsRmsNorm(residual, SplitKPartials(rows, plain->contiguous(), slices),
                                     weight, config_.rms_norm_eps);
    }
  }
#endif
  return AddRmsNorm(residual, Project(linear, x), weight);
}

at::Tensor CausalLM::StepAttentionHeads(const DecoderLayer& layer, int64_t index,
                                        const at::Tensor& x, const at::Tensor& cos,
                                        const at::Tensor& sin, KvCache& cache) const {
#ifdef ROLLOUT_WITH_CUDA
  if (FusedStep(x) && UsesGroup({&layer.q_proj, &layer.k_proj, &layer.v_proj}, layer.qkv_weight,
                                layer.qkv_bias)) {
    const int64_t q_heads = config_.num_attention_heads, kv_heads = config_.num_key_value_heads;
    const int64_t dim = config_.head_dim;
    const at::Tensor qkv = ProjectGroup({&layer.q_proj, &layer.k_proj, &layer.v_proj},
                                        layer.qkv_weight, layer.qkv_bias, x);  // [N, (Hq + 2 Hkv) D]
    if (config_.qk_norm) {
      FusedQkHeadRmsNorm_(qkv, layer.q_norm, layer.k_norm, q_heads, kv_heads, dim,
                          config_.rms_norm_eps);
    }
    const double scale = 1.0 / std::sqrt(static_cast<double>(dim));
    at::Tensor out = cache.TryRotateAppendAndAttend(index, qkv, cos, sin, scale);  // [N, Hq, D]
    if (!out.defined()) {
      const auto [q, k] = FusedRopeQk(qkv, cos, sin, q_heads, kv_heads, dim);
      const at::Tensor v = qkv.narrow(1, (q_heads + kv_heads) * dim, kv_heads * dim)
                               .view({-1, kv_heads, dim});
      out = cache.AppendAndAttend(index, q, k, v, scale);
    }
    return out.reshape({-1, q_heads * dim});
  }
#endif
  return AttentionHeads(layer, index, x, cos, sin, at::Tensor(), &cache);
}

at::Tensor CausalLM::StepMlpActivation(const DecoderLayer& layer, const at::Tensor& x) const {
#ifdef ROLLOUT_WITH_CUDA
  if (FusedStep(x) && UsesGroup({&layer.gate_proj, &layer.up_proj}, layer.gate_up_weight,
                                layer.gate_up_bias)) {
    if (!layer.gate_up_bias.defined() && !AddsAdapterTerm({&layer.gate_proj, &layer.up_proj}) &&
        FusedGateUpSwigluApplies(x, layer.gate_up_weight)) {
      return FusedGateUpSwiglu(x, layer.gate_up_weight);
    }
    const at::Tensor gate_up = ProjectGroup({&layer.gate_proj, &layer.up_proj},
                                            layer.gate_up_weight, layer.gate_up_bias, x);
    return FusedSwigluHalves(gate_up);
  }
#endif
  return MlpActivation(layer, x);
}

}  // namespace rollout::models
