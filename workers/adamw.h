// AdamW over a model's trainable tensors (torch.optim.AdamW semantics: decoupled
// weight decay, bias correction; optimizer state on each parameter's device), or
// torch.optim.Adam's (weight decay as an L2 term in the gradient) with
// decoupled_weight_decay false: optim.optimizer's AdamW and Adam. Only parameters with a
// gradient are stepped; state is created on a parameter's first step. The state is
// the same for both, so a checkpoint of one resumes with the other.
//
// Mixed precision, as verl's FSDP actor (model_dtype fp32, compute in bfloat16): a
// bfloat16 or float16 parameter steps through a float32 master copy kept in its state,
// with float32 moments and its gradient in float32 (WidenGradients); the parameter then
// holds the master rounded to its dtype. Stepping the parameter itself would lose every
// update below half its ulp: at lr 1e-6 a bfloat16 weight of 0.02 (ulp 1.2e-4) never
// moves. The master follows writes made to its parameter outside Step (a checkpoint's
// weights, a weight sync): an element whose parameter no longer equals the master's
// rounding starts again from the parameter's value.
//
// Sharded (ZeRO-1, as verl's FSDP and OpenRLHF's DeepSpeed keep a data-parallel group's
// optimizer state: workers/optimizer_shards.h), each rank steps and keeps the state of
// only the parameters StateShards assigns it; the group then copies each stepped
// parameter from its owner to the others.
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

// Which rank of a data-parallel group steps each parameter.
struct StateShards {
  int rank = 0;
  int world_size = 1;
  // Parallel to the optimizer's parameters: the rank that steps each. Empty: this
  // process steps them all (one rank, or an unsharded group).
  std::vector<int> owners;
};

// The dtype and device of a parameter's moments and master copy: float32 for a
// bfloat16 or float16 parameter, else the parameter's own.
at::TensorOptions StateOptions(const at::Tensor& param);

class AdamW {
 public:
  // `params` point at tensors the caller keeps alive (a model's parameters). `shards`:
  // owners parallel to `params`, or empty.
  AdamW(std::vector<at::Tensor*> params, AdamWOptions options, StateShards shards = {});

  const std::vector<at::Tensor*>& params() const { return params_; }
  void set_lr(double lr) { options_.lr = lr; }
  const AdamWOptions& options() const { return options_; }

  // Steps the parameters with a gradient that this rank owns.
  void Step();
  bool sharded() const { return !shards_.owners.empty(); }
  const StateShards& shards() const { return shards_; }
  // Whether this rank steps parameter `index` (and keeps its state).
  bool Owns(size_t index) const { return shards_.owners.empty() || shards_.owners[index] == shards_.rank; }
  // Gives the gradient of every bfloat16 / float16 parameter float32 storage, so that
  // the backward passes after it add into it in float32 (autograd adds a new gradient
  // into an existing one in place, whatever its dtype): verl's float32 gradient
  // accumulation over a mini-batch's micro-batches. Float32 gradients, and parameters
  // without one, are left as they are.
  void WidenGradients();
  // Drops every gradient (the next backward allocates fresh ones).
  void ZeroGrad();

  // One parameter's state. All three are undefined until the parameter's first step:
  // a parameter that never had a gradient has no state (not zeros).
  struct State {
    // The parameter's shape and device; float32 for a bfloat16 or float16 parameter,
    // else the parameter's dtype.
    at::Tensor exp_avg;
    at::Tensor exp_avg_sq;  // likewise
    at::Tensor step;        // float32 scalar on the parameter's device
    // A bfloat16 or float16 parameter's float32 master copy; undefined for a float32
    // parameter (and until the first step).
    at::Tensor master;
  };
  // Parallel to the `params` given at construction (checkpoints save these); sharded,
  // the state of a parameter another rank owns is undefined here.
  const std::vector<State>& states() const { return states_; }
  // Replaces every parameter's state with `states`: tensors that already have the
  // state's device and dtype (the step: float32) are taken over, not copied — the
  // optimizer updates them in place, so the caller must hand over tensors nothing else
  // uses (a checkpoint load's); others are converted. A master is optional (without
  // one the next step starts from the parameter) and dropped for a float32 parameter.
  // InvalidArgument, changing nothing, when the count differs, a state is partly
  // defined, or a shape does not match its parameter's. Sharded, the states of
  // parameters another rank owns are dropped.
  absl::Status RestoreStates(std::vector<State> states);

 private:
  std::vector<at::Tensor*> params_;
  std::vector<State> states_;  // parallel to params_; undefined until first step
  AdamWOptions options_;
  StateShards shards_;
};

}  // namespace rollout::workers
