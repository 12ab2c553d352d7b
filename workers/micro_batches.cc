#include "workers/micro_batches.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace rollout::workers {

absl::StatusOr<std::vector<RowRange>> MicroBatchRanges(int64_t start, int64_t rows,
                                                       const MicroBatchSize& size,
                                                       absl::Span<const int64_t> row_tokens) {
  std::vector<RowRange> ranges;
  const int64_t end = start + rows;
  if (size.max_tokens <= 0) {
    for (int64_t first = start; first < end; first += size.rows) {
      ranges.push_back({first, std::min(size.rows, end - first)});
    }
    return ranges;
  }
  if (static_cast<int64_t>(row_tokens.size()) < end) {
    return absl::InvalidArgumentError(absl::StrCat("token counts for ", row_tokens.size(),
                                                   " rows; the micro-batches need ", end));
  }
  int64_t tokens = 0;
  for (int64_t row = start; row < end; ++row) {
    const int64_t count = row_tokens[row];
    if (count > size.max_tokens) {
      return absl::InvalidArgumentError(absl::StrCat("row ", row, " holds ", count,
                                                     " tokens, more than the micro-batch budget of ",
                                                     size.max_tokens));
    }
    if (ranges.empty() || tokens + count > size.max_tokens) {
      ranges.push_back({row, 0});
      tokens = 0;
    }
    ++ranges.back().rows;
    tokens += count;
  }
  return ranges;
}

std::vector<int64_t> RowTokensFor(const MicroBatchSize& size, const at::Tensor& attention_mask) {
  if (size.max_tokens <= 0) return {};
  const at::Tensor counts = attention_mask.ne(0).sum(1).to(at::kLong).cpu().contiguous();
  return std::vector<int64_t>(counts.data_ptr<int64_t>(), counts.data_ptr<int64_t>() + counts.numel());
}

at::Tensor ReorderRows(const at::Tensor& tensor, const std::vector<int64_t>& order) {
  if (!tensor.defined()) return tensor;
  const at::Tensor index = at::tensor(order, at::kLong).to(tensor.device());
  return tensor.index_select(0, index);
}

}  // namespace rollout::workers
