#include "algorithms/token_log_probs.h"

#include <ATen/ATen.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace rollout::algorithms {

absl::StatusOr<at::Tensor> TokenLogProbs(const at::Tensor& logits, const at::Tensor& tokens,
                                         int64_t rows_per_chunk) {
  if (logits.dim() != 3 || tokens.dim() != 2 || logits.size(0) != tokens.size(0) ||
      logits.size(1) != tokens.size(1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "token log-probs need logits [B, T, V] and tokens [B, T]; got logits [",
        absl::StrJoin(logits.sizes(), ", "), "] and tokens [", absl::StrJoin(tokens.sizes(), ", "),
        "]"));
  }
  if (!at::isFloatingType(logits.scalar_type()) || tokens.scalar_type() != at::kLong) {
    return absl::InvalidArgumentError(
        absl::StrCat("token log-probs need floating logits and int64 tokens; got ",
                     c10::toString(logits.scalar_type()), " and ",
                     c10::toString(tokens.scalar_type())));
  }
  if (tokens.numel() > 0) {
    const int64_t low = tokens.min().item<int64_t>();
    const int64_t high = tokens.max().item<int64_t>();
    if (low < 0 || high >= logits.size(2)) {
      return absl::InvalidArgumentError(absl::StrCat("token ids must be in [0, ", logits.size(2),
                                                     "); got values in [", low, ", ", high, "]"));
    }
  }
  at::Tensor out = at::empty(tokens.sizes(), logits.options().dtype(at::kFloat));
  const at::Tensor index = tokens.to(logits.device()).unsqueeze(-1);
  const int64_t step = std::max<int64_t>(1, rows_per_chunk);
  for (int64_t begin = 0; begin < logits.size(0); begin += step) {
    const int64_t end = std::min(begin + step, logits.size(0));
    at::Tensor chunk = logits.slice(0, begin, end).to(at::kFloat).log_softmax(-1);
    out.slice(0, begin, end).copy_(chunk.gather(-1, index.slice(0, begin, end)).squeeze(-1));
  }
  return out;
}

}  // namespace rollout::algorithms
