#include "algorithms/advantage_inputs.h"

#include <ATen/ATen.h>

#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "algorithms/masked_ops.h"
#include "common/status_macros.h"

namespace rollout::algorithms {

std::string ShapeOf(const at::Tensor& tensor) {
  return absl::StrCat("[", absl::StrJoin(tensor.sizes(), ", "), "]");
}

absl::Status CheckRewards(const at::Tensor& rewards) {
  if (!rewards.defined()) return absl::InvalidArgumentError("token_level_rewards is missing");
  if (rewards.dim() != 2 || !at::isFloatingType(rewards.scalar_type())) {
    return absl::InvalidArgumentError(
        absl::StrCat("token_level_rewards must be [B, T] floating; got ", ShapeOf(rewards), " ",
                     c10::toString(rewards.scalar_type())));
  }
  return CheckFinite(rewards, "token_level_rewards");
}

absl::StatusOr<at::Tensor> TokenTensorLike(const at::Tensor& tensor, const std::string& name,
                                           const at::Tensor& rewards, bool floating,
                                           const std::string& reference_name) {
  if (!tensor.defined()) {
    return absl::InvalidArgumentError(absl::StrCat(name, " is missing; expected ", ShapeOf(rewards),
                                                   " like ", reference_name));
  }
  if (tensor.sizes() != rewards.sizes()) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " must be ", ShapeOf(rewards), " like ", reference_name, "; got ", ShapeOf(tensor)));
  }
  if (floating && !at::isFloatingType(tensor.scalar_type())) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must be floating; got ", c10::toString(tensor.scalar_type())));
  }
  RETURN_IF_ERROR(CheckFinite(tensor, name));
  return tensor.to(rewards.device(), rewards.scalar_type());
}

absl::StatusOr<at::Tensor> RowTensorLike(const at::Tensor& tensor, const std::string& name,
                                         const at::Tensor& rewards, bool floating) {
  const int64_t batch = rewards.size(0);
  if (!tensor.defined()) {
    return absl::InvalidArgumentError(absl::StrCat(name, " is missing; expected [", batch, "]"));
  }
  if (tensor.dim() != 1 || tensor.size(0) != batch) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must be [", batch, "] (one per row); got ", ShapeOf(tensor)));
  }
  if (!floating) {
    if (tensor.scalar_type() != at::kLong) {
      return absl::InvalidArgumentError(absl::StrCat(name, " must be int64 group ids; got ",
                                                     c10::toString(tensor.scalar_type())));
    }
    return tensor.to(rewards.device());
  }
  if (!at::isFloatingType(tensor.scalar_type())) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must be floating; got ", c10::toString(tensor.scalar_type())));
  }
  RETURN_IF_ERROR(CheckFinite(tensor, name));
  return tensor.to(rewards.device(), rewards.scalar_type());
}

DenseGroups Densify(const at::Tensor& index) {
  const auto unique =
      at::_unique2(index, /*sorted=*/true, /*return_inverse=*/true, /*return_counts=*/false);
  return {std::get<1>(unique), std::get<0>(unique).size(0)};
}

}  // namespace rollout::algorithms
