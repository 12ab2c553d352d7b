#include "models/fused_token_scores.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/csrc/autograd/custom_function.h>

#include "models/cuda/token_scores_kernels.h"
#include "models/fused_kernel_support.h"

namespace rollout::models {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

const float* OrNull(const at::Tensor& t) {
  return t.defined() ? t.data_ptr<float>() : nullptr;
}

struct TokenScoresFunction : public torch::autograd::Function<TokenScoresFunction> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& logits_in,
                               const at::Tensor& targets_in) {
    const at::Tensor logits = logits_in.contiguous();
    const at::Tensor targets = targets_in.contiguous();
    const c10::cuda::CUDAGuard guard(logits.device());
    const int64_t rows = logits.size(0);
    const at::TensorOptions f32 = logits.options().dtype(at::kFloat);
    at::Tensor log_probs = at::empty({rows}, f32);
    at::Tensor lse = at::empty({rows}, f32);
    at::Tensor entropy = at::empty({rows}, f32);
    at::Tensor sum_pi_squared = at::empty({rows}, f32);
    cuda::LaunchTokenScoresForward(KernelElementType(logits.scalar_type()), logits.data_ptr(),
                                   targets.data_ptr<int64_t>(), rows, logits.size(1),
                                   log_probs.data_ptr<float>(), lse.data_ptr<float>(),
                                   entropy.data_ptr<float>(), sum_pi_squared.data_ptr<float>(),
                                   at::cuda::getCurrentCUDAStream());
    ctx->save_for_backward({logits, targets, lse, entropy});
    ctx->mark_non_differentiable({sum_pi_squared});
    return {log_probs, entropy, sum_pi_squared};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& logits = saved[0];
    const c10::cuda::CUDAGuard guard(logits.device());
    const at::Tensor grad_log_probs = grads[0].defined() ? grads[0].contiguous() : at::Tensor();
    const at::Tensor grad_entropy = grads[1].defined() ? grads[1].contiguous() : at::Tensor();
    at::Tensor grad_logits = at::empty_like(logits);
    cuda::LaunchTokenScoresBackward(KernelElementType(logits.scalar_type()), logits.data_ptr(),
                                    saved[1].data_ptr<int64_t>(), saved[2].data_ptr<float>(),
                                    saved[3].data_ptr<float>(), OrNull(grad_log_probs),
                                    OrNull(grad_entropy), logits.size(0), logits.size(1),
                                    grad_logits.data_ptr(), at::cuda::getCurrentCUDAStream());
    return {grad_logits, at::Tensor()};  // grads[2], sum_pi_squared's, is never defined
  }
};

}  // namespace

TokenScores FusedTokenScores(const at::Tensor& logits, const at::Tensor& targets) {
  TORCH_CHECK(logits.dim() == 2 && targets.dim() == 1 && logits.size(0) == targets.size(0),
              "fused token scores: need logits [rows, vocab] and targets [rows]");
  variable_list outputs = TokenScoresFunction::apply(logits, targets);
  return {outputs[0], outputs[1], outputs[2]};
}

}  // namespace rollout::models
