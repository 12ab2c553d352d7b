#include "workers/adamw.h"

#include <ATen/ATen.h>

#include "common/torch_compat.h"

namespace rollout::workers {

AdamW::AdamW(std::vector<at::Tensor*> params, AdamWOptions options)
    : params_(std::move(params)), states_(params_.size()), options_(options) {}

void AdamW::Step() {
  std::vector<at::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
  for (size_t i = 0; i < params_.size(); ++i) {
    at::Tensor& param = *params_[i];
    if (!param.grad().defined()) continue;
    State& state = states_[i];
    if (!state.step.defined()) {
      state.exp_avg = at::zeros_like(param);
      state.exp_avg_sq = at::zeros_like(param);
      state.step = at::zeros({}, param.options().dtype(at::kFloat));
    }
    params.push_back(param);
    grads.push_back(param.grad());
    exp_avgs.push_back(state.exp_avg);
    exp_avg_sqs.push_back(state.exp_avg_sq);
    steps.push_back(state.step);
  }
  compat::AdamWStep(params, grads, exp_avgs, exp_avg_sqs, steps, options_.lr, options_.beta1,
                    options_.beta2, options_.eps, options_.weight_decay);
}

void AdamW::ZeroGrad() {
  for (at::Tensor* param : params_) {
    if (param->grad().defined()) param->mutable_grad() = at::Tensor();
  }
}

}  // namespace rollout::workers
