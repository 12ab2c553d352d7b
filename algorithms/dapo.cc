#include "algorithms/dapo.h"

#include <ATen/ATen.h>

#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "algorithms/masked_ops.h"
#include "common/status_macros.h"

namespace rollout::algorithms {
namespace {

absl::Status CheckRow(const at::Tensor& tensor, const std::string& name, int64_t batch) {
  if (!tensor.defined()) return absl::InvalidArgumentError(absl::StrCat(name, " is missing"));
  if (tensor.dim() != 1 || tensor.size(0) != batch) {
    return absl::InvalidArgumentError(absl::StrCat(name, " must be [", batch,
                                                   "] (one per row); got [",
                                                   absl::StrJoin(tensor.sizes(), ", "), "]"));
  }
  return absl::OkStatus();
}

absl::Status CheckLengths(const at::Tensor& lengths, int64_t max_response_length) {
  if (lengths.numel() == 0) return absl::OkStatus();
  const int64_t shortest = lengths.min().item<int64_t>();
  const int64_t longest = lengths.max().item<int64_t>();
  if (shortest < 0 || longest > max_response_length) {
    return absl::InvalidArgumentError(
        absl::StrCat("response_lengths must be in [0, max_response_length = ", max_response_length,
                     "]; got values in [", shortest, ", ", longest, "]"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<OverlongShaping> ShapeOverlongScores(const at::Tensor& scores,
                                                    const at::Tensor& response_lengths,
                                                    const OverlongBufferOptions& options) {
  if (!scores.defined() || scores.dim() != 1 || !at::isFloatingType(scores.scalar_type())) {
    return absl::InvalidArgumentError("scores must be [B] floating");
  }
  RETURN_IF_ERROR(CheckRow(response_lengths, "response_lengths", scores.size(0)));
  if (!at::isIntegralType(response_lengths.scalar_type(), /*includeBool=*/false)) {
    return absl::InvalidArgumentError(absl::StrCat("response_lengths must be integral; got ",
                                                   c10::toString(response_lengths.scalar_type())));
  }
  RETURN_IF_ERROR(CheckFinite(scores, "scores"));
  if (!options.enable) return OverlongShaping{scores, at::zeros_like(scores)};
  if (options.len <= 0 || options.max_response_length <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "overlong_buffer.len and max_response_length must be positive; got len = ", options.len,
        ", max_response_length = ", options.max_response_length));
  }
  RETURN_IF_ERROR(CheckLengths(response_lengths, options.max_response_length));
  const at::Tensor lengths = response_lengths.to(scores.device(), scores.scalar_type());
  const double expected_length = static_cast<double>(options.max_response_length - options.len);
  const at::Tensor exceed = lengths - expected_length;
  const at::Tensor penalties =
      (-exceed / static_cast<double>(options.len) * options.penalty_factor).clamp_max(0.0);
  return OverlongShaping{scores + penalties, penalties};
}

absl::StatusOr<GroupFilter> FilterGroups(const at::Tensor& metric, const at::Tensor& group_ids) {
  if (!metric.defined() || metric.dim() != 1) {
    return absl::InvalidArgumentError("metric must be [B], one value per row");
  }
  RETURN_IF_ERROR(CheckRow(group_ids, "group_ids", metric.size(0)));
  if (group_ids.scalar_type() != at::kLong) {
    return absl::InvalidArgumentError(
        absl::StrCat("group_ids must be int64; got ", c10::toString(group_ids.scalar_type())));
  }
  if (metric.is_complex()) {
    return absl::InvalidArgumentError(
        absl::StrCat("metric must be real; got ", c10::toString(metric.scalar_type())));
  }
  RETURN_IF_ERROR(CheckFinite(metric, "metric"));
  const at::Tensor values = metric.to(at::kDouble);
  at::Tensor groups, inverse, counts;
  std::tie(groups, inverse, counts) = at::_unique2(group_ids.to(metric.device()), /*sorted=*/true,
                                                   /*return_inverse=*/true, /*return_counts=*/true);
  const at::Tensor seed =
      at::zeros({groups.size(0)}, values.options());  // ignored: include_self is false
  const at::Tensor highest = seed.scatter_reduce(0, inverse, values, "amax", false);
  const at::Tensor lowest = seed.scatter_reduce(0, inverse, values, "amin", false);
  const at::Tensor keep_group = (highest != lowest).logical_or(counts == 1);
  return GroupFilter{keep_group.index_select(0, inverse), keep_group.sum().item<int64_t>()};
}

}  // namespace rollout::algorithms
