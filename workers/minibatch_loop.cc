#include "workers/minibatch_loop.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "workers/gradient_sync.h"

namespace rollout::workers {

absl::Status CheckMiniBatchPlan(const MiniBatchPlan& plan, const char* what) {
  if (plan.mini_batch_rows < 1 || plan.micro_batch_rows < 1 || plan.epochs < 1 ||
      !(plan.grad_clip > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": mini-batch rows (", plan.mini_batch_rows, "), micro-batch rows (",
        plan.micro_batch_rows, ") and ppo_epochs (", plan.epochs, ") must be >= 1 and grad_clip (",
        plan.grad_clip, ") > 0"));
  }
  return absl::OkStatus();
}

absl::StatusOr<MiniBatchResult> RunMiniBatches(int64_t rows, const MiniBatchPlan& plan,
                                               const std::vector<at::Tensor*>& trainable,
                                               AdamW& optimizer, const MicroBatchStep& step) {
  const int64_t mini = plan.mini_batch_rows;
  if (rows <= 0 || rows % mini != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(rows, " rows are not a whole number of mini-batches of ", mini, " rows"));
  }
  MiniBatchResult result;
  for (int64_t epoch = 0; epoch < plan.epochs; ++epoch) {
    for (int64_t start = 0; start < rows; start += mini) {
      optimizer.ZeroGrad();
      for (int64_t offset = 0; offset < mini; offset += plan.micro_batch_rows) {
        const int64_t length = std::min(plan.micro_batch_rows, mini - offset);
        if (absl::Status s = step(start + offset, length, static_cast<double>(length) / mini); !s.ok()) {
          optimizer.ZeroGrad();
          return s;
        }
      }
      if (plan.data_parallel != nullptr) {
        if (absl::Status s = AverageGradients(*plan.data_parallel, trainable); !s.ok()) {
          optimizer.ZeroGrad();
          return s;
        }
      }
      const double grad_norm = ClipGradNorm(trainable, plan.grad_clip);
      if (std::isfinite(grad_norm)) {
        optimizer.Step();
      } else {
        ++result.skipped_steps;
      }
      result.grad_norms.push_back(grad_norm);
    }
  }
  optimizer.ZeroGrad();
  return result;
}

double Mean(const std::vector<double>& values) {
  double sum = 0;
  for (double value : values) sum += value;
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

std::map<std::string, double> MeanMetrics(const MetricLists& lists) {
  std::map<std::string, double> means;
  for (const auto& [name, values] : lists) means[name] = Mean(values);
  return means;
}

double ClipGradNorm(const std::vector<at::Tensor*>& params, double max_norm) {
  c10::NoGradGuard no_grad;
  std::vector<at::Tensor> norms;
  for (const at::Tensor* param : params) {
    if (param->grad().defined()) norms.push_back(param->grad().detach().to(at::kFloat).norm());
  }
  if (norms.empty()) return 0;
  const double total = at::stack(norms).norm().item<double>();
  if (!std::isfinite(total)) return total;
  const double scale = max_norm / (total + 1e-6);
  if (scale < 1) {
    for (at::Tensor* param : params) {
      if (param->grad().defined()) param->mutable_grad().mul_(scale);
    }
  }
  return total;
}

}  // namespace rollout::workers
