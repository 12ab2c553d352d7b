#include "workers/minibatch_loop.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/mix_bits.h"
#include "common/status_macros.h"
#include "common/uniform_random.h"
#include "workers/gradient_sync.h"
#include "workers/optimizer_shards.h"

namespace rollout::workers {

absl::Status CheckMiniBatchPlan(const MiniBatchPlan& plan, const char* what) {
  if (plan.mini_batch_rows < 1 || plan.micro_batch.rows < 1 || plan.epochs < 1 ||
      plan.micro_batch.max_tokens < 0 || !(plan.grad_clip > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": mini-batch rows (", plan.mini_batch_rows, "), micro-batch rows (",
        plan.micro_batch.rows, ") and ppo_epochs (", plan.epochs,
        ") must be >= 1, the micro-batch token budget (", plan.micro_batch.max_tokens,
        ") >= 0 and grad_clip (", plan.grad_clip, ") > 0"));
  }
  return absl::OkStatus();
}

std::vector<int64_t> EpochRowOrder(int64_t rows, uint64_t seed, int64_t epoch) {
  std::mt19937_64 generator(MixBits(seed + static_cast<uint64_t>(epoch + 1) * kGoldenGamma));
  return ShuffledRange(rows, generator);
}

namespace {

// Each mini-batch's micro-batches over rows in the order `row_tokens` lists them, the
// last mini-batch taking the rows left over.
absl::StatusOr<std::vector<std::vector<RowRange>>> PlanMiniBatches(int64_t rows, const MiniBatchPlan& plan,
                                                                   absl::Span<const int64_t> row_tokens) {
  std::vector<std::vector<RowRange>> mini_batches;
  for (int64_t start = 0; start < rows; start += plan.mini_batch_rows) {
    ASSIGN_OR_RETURN(std::vector<RowRange> micro_batches,
                     MicroBatchRanges(start, std::min(plan.mini_batch_rows, rows - start), plan.micro_batch,
                                      row_tokens));
    mini_batches.push_back(std::move(micro_batches));
  }
  return mini_batches;
}

// One mini-batch: its micro-batches' gradients, `check`, the data-parallel average,
// clipping and the optimizer step (skipped for a non-finite norm). The caller zeroes the
// gradients before and after.
absl::Status RunMiniBatch(const std::vector<RowRange>& micro_batches, const MiniBatchPlan& plan,
                          const std::vector<at::Tensor*>& trainable, AdamW& optimizer,
                          const MicroBatchStep& step, const MiniBatchCheck& check, MiniBatchResult* result) {
  for (const RowRange& micro : micro_batches) {
    RETURN_IF_ERROR(step(micro.start, micro.rows, static_cast<double>(micro.rows) / plan.mini_batch_rows));
    optimizer.WidenGradients();
  }
  if (check) RETURN_IF_ERROR(check());
  if (plan.data_parallel != nullptr) RETURN_IF_ERROR(AverageGradients(*plan.data_parallel, trainable));
  const double grad_norm = ClipGradNorm(trainable, plan.grad_clip);
  if (std::isfinite(grad_norm)) {
    optimizer.Step();
    if (optimizer.sharded()) RETURN_IF_ERROR(BroadcastStepped(*plan.data_parallel, optimizer));
  } else {
    ++result->skipped_steps;
  }
  result->grad_norms.push_back(grad_norm);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MiniBatchResult> RunMiniBatches(int64_t rows, absl::Span<const int64_t> row_tokens,
                                               const MiniBatchPlan& plan,
                                               const std::vector<at::Tensor*>& trainable,
                                               AdamW& optimizer, const MicroBatchStep& step,
                                               const MiniBatchCheck& check, const EpochReorder& reorder) {
  if (rows <= 0) return absl::InvalidArgumentError(absl::StrCat("no rows to train on (", rows, ")"));
  if (optimizer.sharded() && plan.data_parallel == nullptr) {
    return absl::InternalError("the optimizer's state is sharded, but its mini-batch loop has no data-parallel group");
  }
  if (plan.shuffle && !reorder) {
    return absl::InvalidArgumentError("a shuffled mini-batch loop needs a way to reorder its rows");
  }
  std::vector<std::vector<RowRange>> mini_batches;
  if (!plan.shuffle) {
    ASSIGN_OR_RETURN(mini_batches, PlanMiniBatches(rows, plan, row_tokens));
  }
  MiniBatchResult result;
  for (int64_t epoch = 0; epoch < plan.epochs; ++epoch) {
    if (plan.shuffle) {
      const std::vector<int64_t> order = EpochRowOrder(rows, plan.shuffle_seed, epoch);
      std::vector<int64_t> epoch_tokens;
      if (!row_tokens.empty()) {
        for (int64_t row : order) epoch_tokens.push_back(row_tokens[static_cast<size_t>(row)]);
      }
      ASSIGN_OR_RETURN(mini_batches, PlanMiniBatches(rows, plan, epoch_tokens));
      if (absl::Status s = reorder(order); !s.ok()) {
        optimizer.ZeroGrad();
        return s;
      }
    }
    for (const std::vector<RowRange>& micro_batches : mini_batches) {
      optimizer.ZeroGrad();
      if (absl::Status s = RunMiniBatch(micro_batches, plan, trainable, optimizer, step, check, &result); !s.ok()) {
        optimizer.ZeroGrad();
        return s;
      }
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

std::map<std::string, double> MeanMetrics(const TensorMetricLists& lists) {
  std::vector<std::string> names;
  std::vector<at::Tensor> means;
  for (const auto& [name, values] : lists) {
    if (values.empty()) continue;
    names.push_back(name);
    means.push_back(at::stack(values).to(at::kDouble).mean());
  }
  std::map<std::string, double> result;
  for (const auto& [name, values] : lists) result[name] = 0;
  if (means.empty()) return result;
  const at::Tensor host = at::stack(means).cpu();
  for (size_t i = 0; i < names.size(); ++i) result[names[i]] = host[static_cast<int64_t>(i)].item<double>();
  return result;
}

double ClipGradNorm(const std::vector<at::Tensor*>& params, double max_norm) {
  c10::NoGradGuard no_grad;
  std::vector<at::Tensor> grads, float_grads;
  for (const at::Tensor* param : params) {
    if (!param->grad().defined()) continue;
    grads.push_back(param->grad());
    float_grads.push_back(param->grad().detach().to(at::kFloat));  // the float32 gradients as they are
  }
  if (grads.empty()) return 0;
  // One multi-tensor kernel on CUDA for the per-tensor norms, then one for the scaling.
  const double total = at::stack(at::_foreach_norm(float_grads)).norm().item<double>();
  if (!std::isfinite(total)) return total;
  const double scale = max_norm / (total + 1e-6);
  if (scale < 1) at::_foreach_mul_(grads, scale);
  return total;
}

}  // namespace rollout::workers
