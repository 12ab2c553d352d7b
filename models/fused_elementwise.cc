#include "models/fused_elementwise.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/csrc/autograd/custom_function.h>

#include "models/cuda/elementwise_kernels.h"
#include "models/fused_decode.h"
#include "models/fused_kernel_support.h"
#include "models/grouped_linear.h"

namespace rollout::models {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// gate/up [..., width] as rows `stride` elements apart: as they are when both are column
// blocks of one buffer with a common row stride (GroupedLinear's gate/up outputs),
// else contiguous copies.
struct SwigluOperands {
  at::Tensor gate, up;
  int64_t rows, width, stride;
};

SwigluOperands RowsOf(const at::Tensor& gate, const at::Tensor& up) {
  const int64_t width = gate.size(-1);
  const int64_t rows = width == 0 ? 0 : gate.numel() / width;
  const int64_t stride = gate.dim() >= 2 && rows > 1 ? gate.stride(-2) : width;
  if (IsColumnBlock(gate, stride) && IsColumnBlock(up, stride)) return {gate, up, rows, width, stride};
  return {gate.contiguous(), up.contiguous(), rows, width, width};
}

struct SwigluFunction : public torch::autograd::Function<SwigluFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& gate_in, const at::Tensor& up_in) {
    const SwigluOperands in = RowsOf(gate_in, up_in);
    const c10::cuda::CUDAGuard guard(in.gate.device());
    at::Tensor out = at::empty(gate_in.sizes(), gate_in.options());
    cuda::LaunchSwigluForward(KernelElementType(in.gate.scalar_type()), in.gate.data_ptr(),
                              in.up.data_ptr(), in.rows, in.width, in.stride, out.data_ptr(),
                              at::cuda::getCurrentCUDAStream());
    ctx->save_for_backward({in.gate, in.up});
    ctx->saved_data["stride"] = in.stride;
    return out;
  }

  // When gate and up are the two halves of one product's rows, their gradients are
  // written as the halves of one buffer, which GroupedLinear's backward then takes
  // whole instead of concatenating them.
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor &gate = saved[0], &up = saved[1];
    const int64_t stride = ctx->saved_data["stride"].toInt();
    const at::Tensor grad_out = grads[0].contiguous();
    const int64_t width = gate.size(-1);
    const int64_t rows = width == 0 ? 0 : gate.numel() / width;
    const c10::cuda::CUDAGuard guard(grad_out.device());
    const bool halves = stride == 2 * width &&
                        up.data_ptr() == static_cast<char*>(gate.data_ptr()) + width * gate.element_size();
    at::Tensor grad_gate, grad_up;
    if (halves) {
      const at::Tensor both = at::empty({rows, 2 * width}, gate.options());
      grad_gate = both.narrow(1, 0, width).view(gate.sizes());
      grad_up = both.narrow(1, width, width).view(up.sizes());
    } else {
      grad_gate = at::empty(gate.sizes(), gate.options());
      grad_up = at::empty(up.sizes(), up.options());
    }
    cuda::LaunchSwigluBackward(KernelElementType(grad_out.scalar_type()), gate.data_ptr(),
                               up.data_ptr(), grad_out.data_ptr(), rows, width, stride,
                               halves ? 2 * width : width, grad_gate.data_ptr(), grad_up.data_ptr(),
                               at::cuda::getCurrentCUDAStream());
    return {grad_gate, grad_up};
  }
};

// x [tokens, heads, dim] (heads and dims contiguous, any token stride) and cos/sin
// [tokens, dim] contiguous -> [tokens, heads, dim] contiguous.
at::Tensor ApplyRope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin,
                     bool backward) {
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor out = at::empty(x.sizes(), x.options());
  cuda::LaunchRope(KernelElementType(x.scalar_type()), x.data_ptr(), x.stride(0), cos.data_ptr(),
                   sin.data_ptr(), x.size(0), x.size(1), x.size(2), backward, out.data_ptr(),
                   at::cuda::getCurrentCUDAStream());
  return out;
}

struct RopeFunction : public torch::autograd::Function<RopeFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& cos,
                            const at::Tensor& sin) {
    ctx->save_for_backward({cos, sin});
    return ApplyRope(x, cos, sin, /*backward=*/false);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    return {ApplyRope(grads[0].contiguous(), saved[0], saved[1], /*backward=*/true), at::Tensor(),
            at::Tensor()};
  }
};

// inputs: residual, then delta when there is one (a list of zero or one), then weight.
// Outputs {sum, normed} with a delta, {normed} without. The forward is the inference
// kernel (FusedAddRmsNorm), so a forward with and without autograd rounds alike.
struct AddRmsNormFunction : public torch::autograd::Function<AddRmsNormFunction> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& residual,
                               at::TensorList delta, const at::Tensor& weight, double eps) {
    const bool has_delta = !delta.empty();
    auto [sum, normed] =
        FusedAddRmsNorm(residual, has_delta ? delta[0] : at::Tensor(), weight, eps);
    ctx->save_for_backward({sum, weight.contiguous()});
    ctx->saved_data["eps"] = eps;
    ctx->saved_data["has_delta"] = has_delta;
    if (has_delta) return {sum, normed};
    return {normed};
  }

  // Unused outputs' gradients arrive as zeros (materialised).
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &weight = saved[1];
    const bool has_delta = ctx->saved_data["has_delta"].toBool();
    const at::Tensor grad_sum = has_delta ? grads[0].contiguous() : at::Tensor();
    const at::Tensor grad_normed = grads[has_delta ? 1 : 0].contiguous();
    const int64_t hidden = x.size(-1), rows = x.numel() / hidden;
    const bool weight_grad = ctx->needs_input_grad(has_delta ? 2 : 1);
    const c10::cuda::CUDAGuard guard(x.device());
    at::Tensor grad_x = at::empty(x.sizes(), x.options());
    at::Tensor partials;
    if (weight_grad) {
      partials = at::empty({cuda::RmsNormBackwardBlocks(rows), hidden},
                           x.options().dtype(at::kFloat));
    }
    cuda::LaunchRmsNormBackward(
        KernelElementType(x.scalar_type()), x.data_ptr(), weight.data_ptr(),
        grad_normed.data_ptr(), has_delta ? grad_sum.data_ptr() : nullptr, rows, hidden,
        static_cast<float>(ctx->saved_data["eps"].toDouble()), grad_x.data_ptr(),
        weight_grad ? partials.data_ptr<float>() : nullptr, at::cuda::getCurrentCUDAStream());
    const at::Tensor grad_weight =
        weight_grad ? partials.sum(0).to(weight.scalar_type()) : at::Tensor();
    // residual and delta reach the sum alike: both get grad_x.
    if (has_delta) return {grad_x, grad_x, grad_weight, at::Tensor()};
    return {grad_x, grad_weight, at::Tensor()};
  }
};

}  // namespace

at::Tensor FusedSwiglu(const at::Tensor& gate, const at::Tensor& up) {
  TORCH_CHECK(gate.sizes() == up.sizes() && gate.scalar_type() == up.scalar_type(),
              "fused SwiGLU: gate and up must match in shape and dtype");
  return SwigluFunction::apply(gate, up);
}

at::Tensor FusedRope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t dim = x.size(-1);
  const int64_t heads = x.size(-2);
  // Tokens may be apart by more than heads * dim (a q/k column block of a grouped
  // projection); within a token the heads and dims must be contiguous.
  at::Tensor flat_x = x.reshape({-1, heads, dim});
  if (flat_x.stride(2) != 1 || flat_x.stride(1) != dim) flat_x = flat_x.contiguous();
  const at::Tensor flat_cos = cos.to(x.scalar_type()).contiguous().view({-1, dim});
  const at::Tensor flat_sin = sin.to(x.scalar_type()).contiguous().view({-1, dim});
  TORCH_CHECK(flat_cos.size(0) == flat_x.size(0), "fused RoPE: cos/sin do not match x's tokens");
  return RopeFunction::apply(flat_x, flat_cos, flat_sin).view(x.sizes());
}

bool DifferentiableAddRmsNormSupports(const at::Tensor& residual) {
  return residual.is_cuda() && residual.dim() >= 1 &&
         cuda::RmsNormBackwardSupports(residual.size(-1));
}

std::pair<at::Tensor, at::Tensor> DifferentiableAddRmsNorm(const at::Tensor& residual,
                                                           const at::Tensor& delta,
                                                           const at::Tensor& weight, double eps) {
  TORCH_CHECK(DifferentiableAddRmsNormSupports(residual),
              "differentiable add + RMSNorm: CUDA rows of at most 12288 elements, got ",
              residual.sizes(), " on ", residual.device());
  std::vector<at::Tensor> deltas;
  if (delta.defined()) deltas.push_back(delta);
  const variable_list out =
      AddRmsNormFunction::apply(residual, at::TensorList(deltas), weight, eps);
  if (delta.defined()) return {out[0], out[1]};
  return {residual, out[0]};
}

}  // namespace rollout::models
