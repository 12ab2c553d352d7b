#include "algorithms/masked_ops.h"

#include <ATen/ATen.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/check.h"

namespace rollout::algorithms {
namespace {

// The mask in the values' dtype, expanded to the shape of values * mask, so that its sum
// counts every element selected (a [B, 1] mask selects whole rows of [B, T] values).
at::Tensor ExpandedMask(const at::Tensor& values, const at::Tensor& mask) {
  return mask.to(values.scalar_type()).expand(at::infer_size(values.sizes(), mask.sizes()));
}

}  // namespace

at::Tensor MaskedMean(const at::Tensor& values, const at::Tensor& mask, std::optional<int64_t> dim) {
  const at::Tensor m = ExpandedMask(values, mask);
  if (dim.has_value()) return (values * m).sum(*dim) / (m.sum(*dim) + 1e-8);
  return (values * m).sum() / (m.sum() + 1e-8);
}

absl::StatusOr<at::Tensor> MaskedVar(const at::Tensor& values, const at::Tensor& mask,
                                     bool unbiased) {
  const at::Tensor mean = MaskedMean(values, mask);
  at::Tensor variance = MaskedMean((values - mean).pow(2), mask);
  if (!unbiased) return variance;
  const double count = ExpandedMask(values, mask).sum(at::kDouble).item<double>();
  if (count == 0) return absl::InvalidArgumentError("masked variance: the mask selects no element");
  if (count == 1) {
    return absl::InvalidArgumentError(
        "masked variance: the mask selects one element; the unbiased variance needs two");
  }
  return variance * (count / (count - 1));
}

absl::StatusOr<at::Tensor> MaskedWhiten(const at::Tensor& values, const at::Tensor& mask,
                                        bool shift_mean) {
  const at::Tensor mean = MaskedMean(values, mask);
  absl::StatusOr<at::Tensor> variance = MaskedVar(values, mask, /*unbiased=*/true);
  if (!variance.ok()) return variance.status();
  at::Tensor whitened = (values - mean) * at::rsqrt(*variance + 1e-8);
  if (!shift_mean) whitened = whitened + mean;
  return whitened;
}

namespace {
thread_local DeferredFiniteChecks* deferred_checks = nullptr;
}  // namespace

absl::Status CheckFinite(const at::Tensor& tensor, const std::string& name) {
  if (!tensor.defined() || !at::isFloatingType(tensor.scalar_type())) return absl::OkStatus();
  if (deferred_checks != nullptr) {
    deferred_checks->pending_.push_back({tensor, name, tensor.isfinite().all()});
    return absl::OkStatus();
  }
  const at::Tensor bad = tensor.isfinite().logical_not();
  if (!bad.any().item<bool>()) return absl::OkStatus();
  const int64_t nans = tensor.isnan().sum().item<int64_t>();
  const int64_t infinite = bad.sum().item<int64_t>() - nans;
  const at::Tensor first = bad.nonzero()[0].cpu();
  std::vector<int64_t> index(first.data_ptr<int64_t>(), first.data_ptr<int64_t>() + first.numel());
  return absl::InvalidArgumentError(absl::StrCat(name, ": ", nans, " NaN and ", infinite,
                                                 " infinite values (first at [",
                                                 absl::StrJoin(index, ", "), "])"));
}

DeferredFiniteChecks::DeferredFiniteChecks() {
  ROLLOUT_CHECK(deferred_checks == nullptr) << "DeferredFiniteChecks: one at a time per thread";
  deferred_checks = this;
}

DeferredFiniteChecks::~DeferredFiniteChecks() { deferred_checks = nullptr; }

absl::Status DeferredFiniteChecks::Resolve() {
  std::vector<Pending> pending = std::move(pending_);
  pending_.clear();
  // One read per device the checks ran on (one, in practice): its flags stacked there.
  std::vector<bool> finite(pending.size(), true);
  std::vector<bool> read(pending.size(), false);
  for (size_t first = 0; first < pending.size(); ++first) {
    if (read[first]) continue;
    const c10::Device device = pending[first].all_finite.device();
    std::vector<size_t> indices;
    std::vector<at::Tensor> flags;
    for (size_t i = first; i < pending.size(); ++i) {
      if (read[i] || pending[i].all_finite.device() != device) continue;
      read[i] = true;
      indices.push_back(i);
      flags.push_back(pending[i].all_finite);
    }
    const at::Tensor host = at::stack(flags).cpu();
    for (size_t k = 0; k < indices.size(); ++k) finite[indices[k]] = host[k].item<bool>();
  }
  for (size_t i = 0; i < pending.size(); ++i) {
    if (finite[i]) continue;
    deferred_checks = nullptr;  // the full check, for its counts and first position
    absl::Status status = CheckFinite(pending[i].tensor, pending[i].name);
    deferred_checks = this;
    return status;
  }
  return absl::OkStatus();
}

}  // namespace rollout::algorithms
