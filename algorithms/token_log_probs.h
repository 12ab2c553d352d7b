// Log-probabilities of given tokens under given logits (verl's logprobs_from_logits).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "absl/status/statusor.h"

namespace rollout::algorithms {

// logits: [B, T, V] floating (any float dtype, any device); tokens: [B, T] int64 with
// values in [0, V). Returns [B, T] float32 on the logits' device: log_softmax(logits)
// gathered at `tokens`. Rows are processed `rows_per_chunk` at a time so the float32
// log-softmax never exists for the whole batch at once.
// InvalidArgument on mismatched shapes or an out-of-range token.
absl::StatusOr<at::Tensor> TokenLogProbs(const at::Tensor& logits, const at::Tensor& tokens,
                                         int64_t rows_per_chunk = 8);

}  // namespace rollout::algorithms
