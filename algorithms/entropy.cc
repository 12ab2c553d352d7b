#include "algorithms/entropy.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "algorithms/masked_ops.h"
#include "common/status_macros.h"

namespace rollout::algorithms {
namespace {

// [b, T, V] logits -> [b, T] entropy, in `dtype`.
at::Tensor ChunkEntropy(const at::Tensor& logits, at::ScalarType dtype) {
  const at::Tensor widened = logits.to(dtype);
  // H is invariant to shifting a row by a constant; shifting by the row's max keeps
  // logsumexp's terms <= 1 and the products p * z small. The shift carries no gradient
  // (it would cancel exactly).
  const at::Tensor shifted = widened - widened.amax(-1, /*keepdim=*/true).detach();
  return shifted.logsumexp(-1) - (shifted.softmax(-1) * shifted).sum(-1);
}

}  // namespace

absl::StatusOr<at::Tensor> EntropyFromLogits(const at::Tensor& logits, int64_t rows_per_chunk) {
  if (!logits.defined() || logits.dim() != 3 || !at::isFloatingType(logits.scalar_type())) {
    return absl::InvalidArgumentError(
        absl::StrCat("entropy: logits: expected a floating [B, T, V] tensor; got ",
                     logits.defined() ? absl::StrCat(c10::toString(logits.scalar_type()), " [",
                                                     absl::StrJoin(logits.sizes(), ", "), "]")
                                      : "none"));
  }
  const at::ScalarType dtype = at::promote_types(logits.scalar_type(), at::kFloat);
  const int64_t step = std::max<int64_t>(1, rows_per_chunk);
  std::vector<at::Tensor> chunks;
  for (int64_t begin = 0; begin < logits.size(0); begin += step) {
    chunks.push_back(
        ChunkEntropy(logits.slice(0, begin, std::min(begin + step, logits.size(0))), dtype));
  }
  at::Tensor entropy = chunks.empty()
                           ? at::empty({0, logits.size(1)}, logits.options().dtype(dtype))
                           : at::cat(chunks, 0);
  // Any NaN or infinite logit makes its row's entropy non-finite (NaN propagates; an
  // infinite max gives inf - inf; -inf gives 0 * -inf), so checking the small output
  // finds them without a [B, T, V] temporary on the success path.
  if (entropy.isfinite().all().item<bool>()) return entropy;
  RETURN_IF_ERROR(WithContext(CheckFinite(logits, "logits"), "entropy"));
  return absl::InvalidArgumentError(absl::StrCat("entropy: logits are finite but span more than ",
                                                 c10::toString(dtype), " can represent"));
}

}  // namespace rollout::algorithms
