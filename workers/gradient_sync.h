// Data-parallel gradient averaging: what DDP / FSDP do between backward and the
// optimizer step, so every rank takes the same step.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "absl/status/status.h"
#include "workers/communicator.h"

namespace rollout::workers {

// Replaces the gradients of `params` by their mean over the communicator's ranks, with
// one all-reduce of a float32 buffer holding every gradient plus one flag per
// parameter (whether a rank has its gradient). A parameter no rank has a gradient for
// keeps none (AdamW then gives it no state, as on one rank); one that only some ranks
// have gets their sum over the world size (the others count as zeros). Every rank must
// pass the same parameters in the same order.
absl::Status AverageGradients(Communicator& communicator, const std::vector<at::Tensor*>& params);

}  // namespace rollout::workers
