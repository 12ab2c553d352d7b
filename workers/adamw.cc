#include "workers/adamw.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/check.h"
#include "common/torch_compat.h"

namespace rollout::workers {

namespace {

// Whether a parameter steps through a float32 master copy.
bool SteppedInFloat32(const at::Tensor& param) {
  return param.scalar_type() == at::kBFloat16 || param.scalar_type() == at::kHalf;
}

// Makes `master` the float32 master of `param`: a copy of it the first time; after
// that, where the parameter no longer equals the master's rounding (it was written
// outside Step), the parameter's value.
void FollowParameter(const at::Tensor& param, at::Tensor& master) {
  if (!master.defined()) {
    master = param.detach().to(at::kFloat);
    return;
  }
  const at::Tensor unchanged = param.eq(master.to(param.scalar_type()));
  at::where_out(master, unchanged, master, param.to(at::kFloat));
}

}  // namespace

at::TensorOptions StateOptions(const at::Tensor& param) {
  return SteppedInFloat32(param) ? param.options().dtype(at::kFloat) : param.options();
}

AdamW::AdamW(std::vector<at::Tensor*> params, AdamWOptions options, StateShards shards)
    : params_(std::move(params)), states_(params_.size()), options_(options), shards_(std::move(shards)) {
  ROLLOUT_CHECK(shards_.owners.empty() || shards_.owners.size() == params_.size());
}

void AdamW::Step() {
  c10::NoGradGuard no_grad;
  std::vector<at::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
  std::vector<size_t> from_masters;  // parameters to set to their masters' rounding
  for (size_t i = 0; i < params_.size(); ++i) {
    at::Tensor& param = *params_[i];
    if (!param.grad().defined() || !Owns(i)) continue;
    State& state = states_[i];
    if (!state.step.defined()) {
      state.exp_avg = at::zeros(param.sizes(), StateOptions(param));
      state.exp_avg_sq = at::zeros(param.sizes(), StateOptions(param));
      state.step = at::zeros({}, param.options().dtype(at::kFloat));
    }
    if (SteppedInFloat32(param)) {
      FollowParameter(param, state.master);
      params.push_back(state.master);
      grads.push_back(param.grad().to(at::kFloat));
      from_masters.push_back(i);
    } else {
      params.push_back(param);
      grads.push_back(param.grad());
    }
    exp_avgs.push_back(state.exp_avg);
    exp_avg_sqs.push_back(state.exp_avg_sq);
    steps.push_back(state.step);
  }
  compat::AdamStep(params, grads, exp_avgs, exp_avg_sqs, steps, options_.lr, options_.beta1, options_.beta2,
                   options_.eps, options_.weight_decay, options_.decoupled_weight_decay);
  for (size_t i : from_masters) params_[i]->copy_(states_[i].master);
}

void AdamW::WidenGradients() {
  for (at::Tensor* param : params_) {
    const at::Tensor& grad = param->grad();
    if (grad.defined() && SteppedInFloat32(*param) && grad.scalar_type() != at::kFloat) {
      param->mutable_grad() = grad.to(at::kFloat);
    }
  }
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
        state.exp_avg_sq.sizes() != params_[i]->sizes() || state.step.numel() != 1 ||
        (state.master.defined() && state.master.sizes() != params_[i]->sizes())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AdamW state of parameter ", i, " does not fit it (shape [", absl::StrJoin(params_[i]->sizes(), ","),
          "]; exp_avg, exp_avg_sq and step must all be present, exp_avg, exp_avg_sq and any master of that shape)"));
    }
  }
  for (size_t i = 0; i < states.size(); ++i) {
    const at::Tensor& param = *params_[i];
    if (!states[i].step.defined() || !Owns(i)) {
      states_[i] = State();
      continue;
    }
    states_[i].exp_avg = states[i].exp_avg.to(StateOptions(param));
    states_[i].exp_avg_sq = states[i].exp_avg_sq.to(StateOptions(param));
    states_[i].step = states[i].step.reshape({}).to(param.options().dtype(at::kFloat));
    states_[i].master = SteppedInFloat32(param) && states[i].master.defined()
                            ? states[i].master.to(param.options().dtype(at::kFloat))
                            : at::Tensor();
  }
  return absl::OkStatus();
}

}  // namespace rollout::workers
