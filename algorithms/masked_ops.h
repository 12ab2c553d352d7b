// Masked reductions over token tensors, as verl's verl_F.masked_mean / masked_var /
// masked_whiten compute them, plus the finiteness check every algorithm runs on its
// inputs. Shapes: `values` and `mask` broadcastable to each other, usually [B, T];
// `mask` is 1 for tokens that count and 0 for padding (any dtype; converted to the
// values' dtype). Results are in the values' dtype and device.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rollout::algorithms {

// sum(values * mask) / (sum(mask) + 1e-8), over everything or along `dim`.
at::Tensor MaskedMean(const at::Tensor& values, const at::Tensor& mask,
                      std::optional<int64_t> dim = std::nullopt);

// Masked variance over every element; `unbiased` applies Bessel's correction.
// InvalidArgument when the mask selects nothing, or (unbiased) only one element.
absl::StatusOr<at::Tensor> MaskedVar(const at::Tensor& values, const at::Tensor& mask,
                                     bool unbiased = true);

// (values - mean) / sqrt(var + 1e-8) with the masked mean and unbiased variance over
// the batch; `shift_mean` false adds the mean back. Same errors as MaskedVar.
absl::StatusOr<at::Tensor> MaskedWhiten(const at::Tensor& values, const at::Tensor& mask,
                                        bool shift_mean = true);

// InvalidArgument "<name>: 3 NaN and 1 infinite values (first at [2, 5])" when `tensor`
// (floating) has any non-finite element; OK otherwise. Synchronises with the device.
absl::Status CheckFinite(const at::Tensor& tensor, const std::string& name);

}  // namespace rollout::algorithms
