#include "workers/adamw.h"

#include <ATen/ATen.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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
  compat::AdamStep(params, grads, exp_avgs, exp_avg_sqs, steps, options_.lr, options_.beta1, options_.beta2,
                   options_.eps, options_.weight_decay, options_.decoupled_weight_decay);
}

void AdamW::ZeroGrad() {
  for (at::Tensor* param : params_) {
    if (param->grad().defined()) param->mutable_grad() = at::Tensor();
  }
}

absl::Status AdamW::RestoreStates(std::vector<State> states) {
  if (states.size() != params_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("AdamW state for ", states.size(),
                                                   " parameters; the optimizer has ", params_.size()));
  }
  for (size_t i = 0; i < states.size(); ++i) {
    const State& state = states[i];
    const int defined = state.exp_avg.defined() + state.exp_avg_sq.defined() + state.step.defined();
    if (defined == 0) continue;
    if (defined != 3 || state.exp_avg.sizes() != params_[i]->sizes() ||
        state.exp_avg_sq.sizes() != params_[i]->sizes() || state.step.numel() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AdamW state of parameter ", i, " does not fit it (shape [", absl::StrJoin(params_[i]->sizes(), ","),
          "]; exp_avg, exp_avg_sq and step must all be present, the first two of that shape)"));
    }
  }
  for (size_t i = 0; i < states.size(); ++i) {
    const at::Tensor& param = *params_[i];
    if (!states[i].step.defined()) {
      states_[i] = State();
      continue;
    }
    states_[i].exp_avg = states[i].exp_avg.to(param.options());
    states_[i].exp_avg_sq = states[i].exp_avg_sq.to(param.options());
    states_[i].step = states[i].step.reshape({}).to(param.options().dtype(at::kFloat));
  }
  return absl::OkStatus();
}

}  // namespace rollout::workers
