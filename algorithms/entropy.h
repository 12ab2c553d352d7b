// Entropy of the categorical distributions given by logits (verl's entropy_from_logits),
// computed without overflow for any finite logits.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "absl/status/statusor.h"

namespace rollout::algorithms {

// logits: [B, T, V] floating (any float dtype, any device). Returns [B, T] on the logits'
// device: H = logsumexp(z) - sum(softmax(z) * z) over V, evaluated on z = logits - max so
// that logits of any magnitude (1e4 and beyond) neither overflow nor cancel. Computed and
// returned in float32 (float64 when the logits are float64, so gradients can be checked
// by finite differences). Differentiable w.r.t. logits. No mask: every position gets its
// entropy, and callers aggregate with AggregateLoss.
//
// Rows are processed `rows_per_chunk` at a time so the full-precision copy of the logits
// never exists for the whole batch (it does, per chunk, when autograd records the graph).
// InvalidArgument on a shape other than [B, T, V], a non-floating dtype, or a non-finite
// logit (named with its position, as CheckFinite does).
absl::StatusOr<at::Tensor> EntropyFromLogits(const at::Tensor& logits, int64_t rows_per_chunk = 8);

}  // namespace rollout::algorithms
