#include "models/fused_elementwise.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/csrc/autograd/custom_function.h>

#include "models/cuda/elementwise_kernels.h"
#include "models/fused_kernel_support.h"

namespace rollout::models {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct SwigluFunction : public torch::autograd::Function<SwigluFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& gate_in, const at::Tensor& up_in) {
    const at::Tensor gate = gate_in.contiguous();
    const at::Tensor up = up_in.contiguous();
    const c10::cuda::CUDAGuard guard(gate.device());
    at::Tensor out = at::empty_like(gate);
    cuda::LaunchSwigluForward(KernelElementType(gate.scalar_type()), gate.data_ptr(), up.data_ptr(),
                              gate.numel(), out.data_ptr(), at::cuda::getCurrentCUDAStream());
    ctx->save_for_backward({gate, up});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor grad_out = grads[0].contiguous();
    const c10::cuda::CUDAGuard guard(grad_out.device());
    at::Tensor grad_gate = at::empty_like(saved[0]);
    at::Tensor grad_up = at::empty_like(saved[1]);
    cuda::LaunchSwigluBackward(KernelElementType(grad_out.scalar_type()), saved[0].data_ptr(),
                               saved[1].data_ptr(), grad_out.data_ptr(), grad_out.numel(),
                               grad_gate.data_ptr(), grad_up.data_ptr(),
                               at::cuda::getCurrentCUDAStream());
    return {grad_gate, grad_up};
  }
};

// x [tokens, heads, dim] and cos/sin [tokens, dim], contiguous.
at::Tensor ApplyRope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin,
                     bool backward) {
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor out = at::empty_like(x);
  cuda::LaunchRope(KernelElementType(x.scalar_type()), x.data_ptr(), cos.data_ptr(), sin.data_ptr(),
                   x.size(0), x.size(1), x.size(2), backward, out.data_ptr(),
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

}  // namespace

at::Tensor FusedSwiglu(const at::Tensor& gate, const at::Tensor& up) {
  TORCH_CHECK(gate.sizes() == up.sizes() && gate.scalar_type() == up.scalar_type(),
              "fused SwiGLU: gate and up must match in shape and dtype");
  return SwigluFunction::apply(gate, up);
}

at::Tensor FusedRope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t dim = x.size(-1);
  const int64_t heads = x.size(-2);
  const at::Tensor flat_x = x.contiguous().view({-1, heads, dim});
  const at::Tensor flat_cos = cos.to(x.scalar_type()).contiguous().view({-1, dim});
  const at::Tensor flat_sin = sin.to(x.scalar_type()).contiguous().view({-1, dim});
  TORCH_CHECK(flat_cos.size(0) == flat_x.size(0), "fused RoPE: cos/sin do not match x's tokens");
  return RopeFunction::apply(flat_x, flat_cos, flat_sin).view(x.sizes());
}

}  // namespace rollout::models
