#include "workers/gradient_sync.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include "common/check.h"
#include "common/status_macros.h"

namespace rollout::workers {

namespace {

// Sums the gradients of `params` over the group, divides by its size and writes the
// means back into them, through one flat float32 buffer.
absl::Status AverageInBuffer(Communicator& communicator, const std::vector<at::Tensor*>& params,
                             int64_t elements) {
  if (params.empty()) return absl::OkStatus();
  at::Tensor buffer = at::empty({elements}, params.front()->options().dtype(at::kFloat));
  int64_t offset = 0;
  for (const at::Tensor* param : params) {
    buffer.narrow(0, offset, param->numel()).copy_(param->grad().reshape(-1));
    offset += param->numel();
  }
  RETURN_IF_ERROR(communicator.AllReduceSum({buffer}));
  buffer.div_(communicator.world_size());
  offset = 0;
  for (at::Tensor* param : params) {
    // In the gradient's dtype (float32 once widened).
    param->mutable_grad().copy_(buffer.narrow(0, offset, param->numel()).view(param->sizes()));
    offset += param->numel();
  }
  return absl::OkStatus();
}

// A gradient as large as a bucket or larger, on its own: summed in place when it is
// contiguous float32 (no buffer at all), else through a buffer of its size.
absl::Status AverageAlone(Communicator& communicator, at::Tensor* param) {
  at::Tensor& grad = param->mutable_grad();
  if (grad.scalar_type() != at::kFloat || !grad.is_contiguous()) {
    return AverageInBuffer(communicator, {param}, param->numel());
  }
  RETURN_IF_ERROR(communicator.AllReduceSum({grad}));
  grad.div_(communicator.world_size());
  return absl::OkStatus();
}

}  // namespace

absl::Status AverageGradients(Communicator& communicator, const std::vector<at::Tensor*>& params,
                              int64_t bucket_elements) {
  ROLLOUT_CHECK(bucket_elements > 0);
  if (params.empty()) return absl::OkStatus();
  c10::NoGradGuard no_grad;
  const int64_t count = static_cast<int64_t>(params.size());
  // How many ranks have each gradient.
  at::Tensor flags = at::zeros({count}, at::kFloat);
  for (int64_t i = 0; i < count; ++i) {
    if (params[i]->grad().defined()) flags[i] = 1;
  }
  at::Tensor holders = flags.to(params.front()->device());
  RETURN_IF_ERROR(communicator.AllReduceSum({holders}));
  flags = holders.cpu();
  const auto holders_at = flags.accessor<float, 1>();
  // Gradients in flat buckets, in the parameters' order; which bucket a gradient joins
  // depends on the sizes alone, the same on every rank.
  std::vector<at::Tensor*> bucket;
  int64_t bucket_size = 0;  // elements
  for (int64_t i = 0; i < count; ++i) {
    if (holders_at[i] == 0) continue;  // no rank has it: it stays without
    at::Tensor* param = params[i];
    // A rank without the gradient adds zeros.
    if (!param->grad().defined()) param->mutable_grad() = at::zeros(param->sizes(), param->options());
    if (param->numel() >= bucket_elements) {
      RETURN_IF_ERROR(AverageAlone(communicator, param));
      continue;
    }
    if (bucket_size + param->numel() > bucket_elements) {
      RETURN_IF_ERROR(AverageInBuffer(communicator, bucket, bucket_size));
      bucket.clear();
      bucket_size = 0;
    }
    bucket.push_back(param);
    bucket_size += param->numel();
  }
  return AverageInBuffer(communicator, bucket, bucket_size);
}

}  // namespace rollout::workers
