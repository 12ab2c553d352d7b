// Validation and grouping helpers shared by the advantage estimators
// (algorithms/advantages.cc, algorithms/optimal_token_baseline.cc). Each check returns
// InvalidArgument naming the argument, with the shape it expected, as the estimators'
// common contract (algorithms/advantages.h) promises.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rollout::algorithms {

// "[2, 3]" for a [2, 3] tensor.
std::string ShapeOf(const at::Tensor& tensor);

// token_level_rewards must be [B, T] floating and finite.
absl::Status CheckRewards(const at::Tensor& rewards);

// A [B, T] companion of the rewards (the mask, or floating values when `floating`),
// finite, returned in the rewards' dtype and on their device. Errors call the
// reference tensor `reference_name`.
absl::StatusOr<at::Tensor> TokenTensorLike(const at::Tensor& tensor, const std::string& name,
                                           const at::Tensor& rewards, bool floating,
                                           const std::string& reference_name = "token_level_rewards");

// A [B] per-row input: int64 group ids (`floating` false) or floating scores, returned on
// the rewards' device (floating ones in the rewards' dtype).
absl::StatusOr<at::Tensor> RowTensorLike(const at::Tensor& tensor, const std::string& name,
                                         const at::Tensor& rewards, bool floating);

// Each row's group id as a dense position in [0, groups) ("inverse"), and the group count.
struct DenseGroups {
  at::Tensor of_row;  // [B] int64
  int64_t count;
};

DenseGroups Densify(const at::Tensor& index);

}  // namespace rollout::algorithms
