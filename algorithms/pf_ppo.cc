#include "algorithms/pf_ppo.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "algorithms/masked_ops.h"
#include "common/status_macros.h"
#include "common/uniform_random.h"

namespace rollout::algorithms {

absl::StatusOr<at::Tensor> PfPpoWeights(const at::Tensor& scores, const PfPpoOptions& options) {
  if (scores.dim() != 1 || !scores.is_floating_point()) {
    return absl::InvalidArgumentError("pf_ppo: scores must be a [B] floating tensor");
  }
  RETURN_IF_ERROR(WithContext(CheckFinite(scores, "scores"), "pf_ppo"));
  const at::Tensor s = scores.to(at::kCPU, at::kDouble);
  at::Tensor weights;
  if (options.reweight_method == "pow") {
    if (!(options.weight_pow >= 0)) {
      return absl::InvalidArgumentError(absl::StrCat("pf_ppo.weight_pow: must be >= 0; got ", options.weight_pow));
    }
    weights = s.abs().pow(options.weight_pow);
  } else if (options.reweight_method == "max_min") {
    weights = (s == s.max()).logical_or(s == s.min()).to(at::kDouble);
  } else if (options.reweight_method == "max_random") {
    weights = at::where(s == s.max(), at::full_like(s, 0.4), at::full_like(s, 0.1));
  } else {
    return absl::InvalidArgumentError(absl::StrCat("pf_ppo.reweight_method: unknown method \"",
                                                   options.reweight_method, "\"; valid: pow, max_min, max_random"));
  }
  return (weights + 1e-8).clamp_min(1e-8);
}

std::vector<int64_t> SampleWithReplacement(const at::Tensor& weights, int64_t count, std::mt19937_64& generator) {
  const at::Tensor cumulative = weights.to(at::kDouble).contiguous().cumsum(0);
  const double* cdf = cumulative.data_ptr<double>();
  const int64_t rows = cumulative.numel();
  const double total = cdf[rows - 1];
  std::vector<int64_t> indices;
  indices.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t row = std::upper_bound(cdf, cdf + rows, UniformUnit(generator) * total) - cdf;
    indices.push_back(std::min(row, rows - 1));
  }
  return indices;
}

}  // namespace rollout::algorithms
