// How a batch's rows split into micro-batches, the units of one forward (and backward):
// runs of a fixed number of rows, or, with a token budget (verl's use_dynamic_bsz with
// ppo_max_token_len_per_gpu / log_prob_max_token_len_per_gpu), runs of consecutive rows
// holding at most that many tokens, each as long as the budget allows. Rows keep their
// order either way, so the rows of one prompt (a GRPO group) stay together.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace rollout::workers {

struct MicroBatchSize {
  // A row count converts implicitly: fixed micro-batches of that many rows.
  MicroBatchSize(int64_t rows = 8, int64_t max_tokens = 0) : rows(rows), max_tokens(max_tokens) {}
  int64_t rows;        // without a token budget; >= 1
  int64_t max_tokens;  // > 0: the token budget (rows is then unused); 0: none
};

struct RowRange {
  int64_t start = 0;
  int64_t rows = 0;
};

// The micro-batches of rows [start, start + rows) of a batch, in order. `row_tokens`
// holds every row's token count (indexed from row 0 of the batch) and is read only with
// a token budget; then InvalidArgument for a row that alone exceeds it, or for too few
// counts.
absl::StatusOr<std::vector<RowRange>> MicroBatchRanges(int64_t start, int64_t rows,
                                                       const MicroBatchSize& size,
                                                       absl::Span<const int64_t> row_tokens);

// For MicroBatchRanges: each row's token count, its nonzero entries of `attention_mask`
// [B, T], where `size` has a token budget; else empty, without touching the mask.
std::vector<int64_t> RowTokensFor(const MicroBatchSize& size, const at::Tensor& attention_mask);

// Rows `order` of `tensor` ([B, ...]) in that order, on its device; each index in
// [0, B). An undefined tensor stays undefined.
at::Tensor ReorderRows(const at::Tensor& tensor, const std::vector<int64_t>& order);

}  // namespace rollout::workers
