// AdamW over a model's trainable tensors (torch.optim.AdamW semantics: decoupled
// weight decay, bias correction; optimizer state in each parameter's dtype and device),
// or torch.optim.Adam's (weight decay as an L2 term in the gradient) with
// decoupled_weight_decay false: optim.optimizer's AdamW and Adam. Only parameters with a
// gradient are stepped; state is created on a parameter's first step. The state is
// the same for both, so a checkpoint of one resumes with the other.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "absl/status/status.h"

namespace rollout::workers {

struct AdamWOptions {
  double lr = 1e-6;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
  // false: torch.optim.Adam's weight decay (weight_decay x param added to the gradient).
  bool decoupled_weight_decay = true;
};

class AdamW {
 public:
  // `params` point at tensors the caller keeps alive (a model's parameters).
  AdamW(std::vector<at::Tensor*> params, AdamWOptions options);

  void set_lr(double lr) { options_.lr = lr; }
  const AdamWOptions& options() const { return options_; }

  void Step();
  // Drops every gradient (the next backward allocates fresh ones).
  void ZeroGrad();

  // One parameter's state. All three are undefined until the parameter's first step:
  // a parameter that never had a gradient has no state (not zeros).
  struct State {
    at::Tensor exp_avg;     // the parameter's shape, dtype and device
    at::Tensor exp_avg_sq;  // likewise
    at::Tensor step;        // float32 scalar on the parameter's device
  };
  // Parallel to the `params` given at construction (checkpoints save these).
  const std::vector<State>& states() const { return states_; }
  // Replaces every parameter's state with `states`: tensors that already have the
  // parameter's device and dtype (the step: float32) are taken over, not copied — the
  // optimizer updates them in place, so the caller must hand over tensors nothing else
  // uses (a checkpoint load's); others are converted. InvalidArgument, changing
  // nothing, when the count differs, a state is partly defined, or a shape does not
  // match its parameter's.
  absl::Status RestoreStates(std::vector<State> states);

 private:
  std::vector<at::Tensor*> params_;
  std::vector<State> states_;  // parallel to params_; undefined until first step
  AdamWOptions options_;
};

}  // namespace rollout::workers
