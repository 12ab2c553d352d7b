// Data-parallel gradient averaging: what DDP / FSDP do between backward and the
// optimizer step, so every rank takes the same step.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "workers/communicator.h"

namespace rollout::workers {

// Gradients are summed in flat float32 buffers ("buckets", as DDP's) of at most this
// many elements (256 MiB), so that averaging needs at most that much memory beyond the
// gradients themselves; a gradient of this size or more is summed on its own, in place
// when it is contiguous float32.
inline constexpr int64_t kBucketElements = int64_t{64} << 20;

// Replaces the gradients of `params` by their mean over the communicator's ranks: one
// all-reduce of a flag per parameter (whether a rank has its gradient), then one per
// bucket. A parameter no rank has a gradient for keeps none (AdamW then gives it no
// state, as on one rank); one that only some ranks have gets their sum over the world
// size (the others count as zeros), in the parameter's dtype where a rank had none.
// Every rank must pass the same parameters in the same order. `bucket_elements` (> 0)
// is for tests.
absl::Status AverageGradients(Communicator& communicator, const std::vector<at::Tensor*>& params,
                              int64_t bucket_elements = kBucketElements);

}  // namespace rollout::workers
