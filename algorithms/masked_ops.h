// Masked reductions over token tensors, as verl's verl_F.masked_mean / masked_var /
// masked_whiten compute them, plus the finiteness check every algorithm runs on its
// inputs. Shapes: `values` and `mask` broadcastable to each other, usually [B, T];
// `mask` is 1 for tokens that count and 0 for padding (any dtype; converted to the
// values' dtype). Results are in the values' dtype and device.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <vector>

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
// (floating) has any non-finite element; OK otherwise. Synchronises with the device,
// unless a DeferredFiniteChecks lives on this thread: then it queues the check there
// and returns OK.
absl::Status CheckFinite(const at::Tensor& tensor, const std::string& name);

// While one lives, CheckFinite on this thread leaves the device alone: it queues each
// check, and Resolve() runs all queued ones with a single device read and returns the
// first failure, with CheckFinite's message (the name it was given, without the context
// its callers add to the OK they got), or OK. For training loops, whose every
// micro-batch's losses check their inputs: a check that reads the device drains the
// GPU's queue, which then idles while the host issues the next kernels. Results computed
// since the last Resolve() are trustworthy only once it returns OK. Queued tensors stay
// alive until then. One at a time per thread; unresolved checks are dropped with it.
class DeferredFiniteChecks {
 public:
  DeferredFiniteChecks();
  ~DeferredFiniteChecks();
  DeferredFiniteChecks(const DeferredFiniteChecks&) = delete;
  DeferredFiniteChecks& operator=(const DeferredFiniteChecks&) = delete;

  absl::Status Resolve();

 private:
  friend absl::Status CheckFinite(const at::Tensor& tensor, const std::string& name);
  struct Pending {
    at::Tensor tensor;
    std::string name;
    at::Tensor all_finite;  // 0-dim bool, on the tensor's device
  };
  std::vector<Pending> pending_;
};

}  // namespace rollout::algorithms
