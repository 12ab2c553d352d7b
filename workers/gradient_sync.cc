#include "workers/gradient_sync.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

namespace rollout::workers {

absl::Status AverageGradients(Communicator& communicator, const std::vector<at::Tensor*>& params) {
  if (params.empty()) return absl::OkStatus();
  c10::NoGradGuard no_grad;
  const int64_t count = static_cast<int64_t>(params.size());
  int64_t elements = 0;
  for (const at::Tensor* param : params) elements += param->numel();
  // [elements + count] float32: the gradients back to back, then the flags.
  at::Tensor buffer = at::zeros({elements + count}, params.front()->options().dtype(at::kFloat));
  at::Tensor flags = at::zeros({count}, at::kFloat);
  int64_t offset = 0;
  for (int64_t i = 0; i < count; ++i) {
    const at::Tensor& grad = params[i]->grad();
    if (grad.defined()) {
      buffer.narrow(0, offset, grad.numel()).copy_(grad.reshape(-1));
      flags[i] = 1;
    }
    offset += params[i]->numel();
  }
  buffer.narrow(0, elements, count).copy_(flags);
  if (absl::Status s = communicator.AllReduceSum({buffer}); !s.ok()) return s;
  buffer.div_(communicator.world_size());
  const at::Tensor present = buffer.narrow(0, elements, count).cpu();
  const auto present_at = present.accessor<float, 1>();
  offset = 0;
  for (int64_t i = 0; i < count; ++i) {
    at::Tensor* param = params[i];
    const int64_t numel = param->numel();
    if (present_at[i] > 0) {
      const at::Tensor mean = buffer.narrow(0, offset, numel).view(param->sizes());
      if (param->grad().defined()) {
        param->mutable_grad().copy_(mean);  // in the gradient's dtype (float32 once widened)
      } else {
        param->mutable_grad() = mean.to(param->scalar_type(), /*non_blocking=*/false, /*copy=*/true);
      }
    }
    offset += numel;
  }
  return absl::OkStatus();
}

}  // namespace rollout::workers
