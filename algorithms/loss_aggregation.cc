#include "algorithms/loss_aggregation.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "algorithms/masked_ops.h"
#include "common/status_macros.h"

namespace rollout::algorithms {
namespace {

// `mask` arrives already in the loss's dtype; `horizon` is used by sum-norm only.
using AggregateFn = at::Tensor (*)(const at::Tensor& loss, const at::Tensor& mask, double horizon);

// Mean of per-row values over the rows that select at least one token. Empty rows hold
// exactly 0 in `row_values` (finite loss times a zero mask), so only the count needs them
// left out; clamping the count keeps an all-empty batch at 0 instead of 0 / 0.
at::Tensor MeanOverNonEmptyRows(const at::Tensor& row_values, const at::Tensor& row_counts) {
  return row_values.sum() / (row_counts > 0).sum().clamp_min(1);
}

at::Tensor TokenMean(const at::Tensor& loss, const at::Tensor& mask, double) {
  return MaskedMean(loss, mask);
}

at::Tensor SeqMeanTokenSum(const at::Tensor& loss, const at::Tensor& mask, double) {
  return MeanOverNonEmptyRows((loss * mask).sum(-1), mask.sum(-1));
}

at::Tensor SeqMeanTokenMean(const at::Tensor& loss, const at::Tensor& mask, double) {
  const at::Tensor counts = mask.sum(-1);
  // Dividing empty rows by 1 keeps their 0 (verl adds 1e-8 instead; equal for 0/1 masks).
  const at::Tensor row_means =
      (loss * mask).sum(-1) / at::where(counts > 0, counts, at::ones_like(counts));
  return MeanOverNonEmptyRows(row_means, counts);
}

at::Tensor SeqMeanTokenSumNorm(const at::Tensor& loss, const at::Tensor& mask, double horizon) {
  return (loss * mask).sum() / horizon;
}

struct Mode {
  absl::string_view name;
  AggregateFn fn;
};

constexpr Mode kModes[] = {
    {"token-mean", TokenMean},
    {"seq-mean-token-sum", SeqMeanTokenSum},
    {"seq-mean-token-mean", SeqMeanTokenMean},
    {"seq-mean-token-sum-norm", SeqMeanTokenSumNorm},
};

std::string ValidModes() {
  return absl::StrJoin(kModes, ", ",
                       [](std::string* out, const Mode& mode) { absl::StrAppend(out, mode.name); });
}

std::string Shape(const at::Tensor& tensor) {
  return absl::StrCat("[", absl::StrJoin(tensor.sizes(), ", "), "]");
}

}  // namespace

absl::StatusOr<at::Tensor> AggregateLoss(const at::Tensor& loss_mat, const at::Tensor& loss_mask,
                                         absl::string_view loss_agg_mode,
                                         double loss_scale_factor) {
  const Mode* mode = nullptr;
  for (const Mode& candidate : kModes) {
    if (candidate.name == loss_agg_mode) {
      mode = &candidate;
      break;
    }
  }
  if (mode == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("loss_agg_mode: unknown mode \"", loss_agg_mode,
                                                   "\"; valid modes are ", ValidModes()));
  }
  if (!std::isfinite(loss_scale_factor) || loss_scale_factor < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("loss_scale_factor: must be finite and >= 0 (0: the mask's length); got ",
                     loss_scale_factor));
  }
  RETURN_IF_ERROR(CheckTokenLossInputs(loss_mask, "loss_mask", {{"loss_mat", loss_mat}}));
  // A batch with T = 0 sums to 0; dividing it by 1 keeps it there.
  const double horizon = loss_scale_factor > 0
                             ? loss_scale_factor
                             : static_cast<double>(std::max<int64_t>(1, loss_mask.size(1)));
  return mode->fn(loss_mat, loss_mask.to(loss_mat.scalar_type()), horizon);
}

absl::Status CheckTokenLossInputs(
    const at::Tensor& mask, const std::string& mask_name,
    std::initializer_list<std::pair<std::string, at::Tensor>> tensors) {
  if (!mask.defined() || mask.dim() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(mask_name, ": expected a [B, T] tensor; got ",
                                                   mask.defined() ? Shape(mask) : "none"));
  }
  RETURN_IF_ERROR(CheckFinite(mask, mask_name));
  for (const auto& [name, tensor] : tensors) {
    if (!tensor.defined()) return absl::InvalidArgumentError(absl::StrCat(name, ": missing"));
    if (!at::isFloatingType(tensor.scalar_type())) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": expected a floating dtype; got ",
                                                     c10::toString(tensor.scalar_type())));
    }
    if (tensor.sizes() != mask.sizes()) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": shape ", Shape(tensor), " does not match ", mask_name, " ", Shape(mask)));
    }
    if (tensor.device() != mask.device()) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": on ", tensor.device().str(), " but ",
                                                     mask_name, " on ", mask.device().str()));
    }
    RETURN_IF_ERROR(CheckFinite(tensor, name));
  }
  return absl::OkStatus();
}

}  // namespace rollout::algorithms
