#include "workers/value_critic.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "algorithms/masked_ops.h"
#include "common/mix_bits.h"
#include "common/status_macros.h"
#include "workers/micro_batches.h"
#include "workers/optimizer_shards.h"

namespace rollout::workers {
namespace {

absl::Status CheckBatch(const ValueBatch& batch, bool for_update) {
  if (!batch.input_ids.defined() || batch.input_ids.dim() != 2 || !batch.response_mask.defined() ||
      batch.response_mask.dim() != 2) {
    return absl::InvalidArgumentError("value batch: input_ids and response_mask must be 2-D tensors");
  }
  const int64_t rows = batch.input_ids.size(0);
  const int64_t total = batch.input_ids.size(1);
  const int64_t response = batch.response_mask.size(1);
  if (batch.response_mask.size(0) != rows || response < 1 || response >= total) {
    return absl::InvalidArgumentError(absl::StrCat("value batch: response_mask is [",
                                                   batch.response_mask.size(0), ", ", response,
                                                   "] for input_ids [", rows, ", ", total, "]"));
  }
  for (const auto& [name, tensor] : {std::pair<const char*, const at::Tensor*>{"attention_mask", &batch.attention_mask},
                                     {"position_ids", &batch.position_ids}}) {
    if (!tensor->defined() || tensor->sizes() != batch.input_ids.sizes()) {
      return absl::InvalidArgumentError(absl::StrCat("value batch: ", name, " must be shaped like input_ids"));
    }
  }
  if (!for_update) return absl::OkStatus();
  for (const auto& [name, tensor] : {std::pair<const char*, const at::Tensor*>{"values", &batch.values},
                                     {"returns", &batch.returns}}) {
    if (!tensor->defined() || tensor->sizes() != batch.response_mask.sizes()) {
      return absl::InvalidArgumentError(
          absl::StrCat("value batch: ", name, " must be [", rows, ", ", response, "]"));
    }
  }
  return absl::OkStatus();
}

ValueBatch ReorderRows(const ValueBatch& batch, const std::vector<int64_t>& order) {
  ValueBatch rows;
  for (const auto& [out, in] : {std::pair<at::Tensor*, const at::Tensor*>{&rows.input_ids, &batch.input_ids},
                                {&rows.attention_mask, &batch.attention_mask},
                                {&rows.position_ids, &batch.position_ids},
                                {&rows.response_mask, &batch.response_mask},
                                {&rows.values, &batch.values},
                                {&rows.returns, &batch.returns}}) {
    *out = workers::ReorderRows(*in, order);
  }
  return rows;
}

ValueBatch SliceRows(const ValueBatch& batch, int64_t start, int64_t length) {
  const auto slice = [&](const at::Tensor& t) { return t.defined() ? t.narrow(0, start, length) : t; };
  ValueBatch rows;
  rows.input_ids = slice(batch.input_ids);
  rows.attention_mask = slice(batch.attention_mask);
  rows.position_ids = slice(batch.position_ids);
  rows.response_mask = slice(batch.response_mask);
  rows.values = slice(batch.values);
  rows.returns = slice(batch.returns);
  return rows;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ValueCritic>> ValueCritic::Create(models::ValueModel* model,
                                                                 const ValueCriticOptions& options) {
  RETURN_IF_ERROR(CheckMiniBatchPlan(options.plan, "critic"));
  ASSIGN_OR_RETURN(LrSchedule schedule, LrSchedule::Create(options.lr_schedule));
  std::vector<at::Tensor*> trainable;
  for (auto& [name, tensor] : model->NamedParameters()) {
    tensor->set_requires_grad(true);
    trainable.push_back(tensor);
  }
  return std::unique_ptr<ValueCritic>(
      new ValueCritic(model, std::move(trainable), options, std::move(schedule)));
}

ValueCritic::ValueCritic(models::ValueModel* model, std::vector<at::Tensor*> trainable,
                         const ValueCriticOptions& options, LrSchedule schedule)
    : model_(model),
      trainable_(std::move(trainable)),
      options_(options),
      schedule_(std::move(schedule)),
      optimizer_(trainable_, options.adamw, ShardsFor(trainable_, options.plan.data_parallel)) {}

at::Tensor ValueCritic::Predict(const ValueBatch& batch) const {
  const int64_t total = batch.input_ids.size(1);
  const int64_t response = batch.response_mask.size(1);
  return model_->Values(batch.input_ids, batch.position_ids, batch.attention_mask)
      .narrow(1, total - response - 1, response);
}

absl::StatusOr<at::Tensor> ValueCritic::ComputeValues(const ValueBatch& batch,
                                                      const MicroBatchSize& micro_batch) const {
  RETURN_IF_ERROR(CheckBatch(batch, /*for_update=*/false));
  if (micro_batch.rows < 1 || micro_batch.max_tokens < 0) {
    return absl::InvalidArgumentError(absl::StrCat("micro-batch rows is ", micro_batch.rows,
                                                   " and token budget ", micro_batch.max_tokens,
                                                   "; must be >= 1 and >= 0"));
  }
  c10::NoGradGuard no_grad;
  const int64_t rows = batch.input_ids.size(0);
  ASSIGN_OR_RETURN(const std::vector<RowRange> ranges,
                   WithContext(MicroBatchRanges(0, rows, micro_batch,
                                                RowTokensFor(micro_batch, batch.attention_mask)),
                               "compute_values"));
  std::vector<at::Tensor> parts;
  for (const RowRange& range : ranges) parts.push_back(Predict(SliceRows(batch, range.start, range.rows)));
  if (parts.empty()) {
    return at::zeros({0, batch.response_mask.size(1)}, batch.input_ids.options().dtype(at::kFloat));
  }
  return at::cat(parts) * batch.response_mask.to(at::kFloat);
}

absl::StatusOr<std::map<std::string, double>> ValueCritic::Update(const ValueBatch& batch) {
  RETURN_IF_ERROR(CheckBatch(batch, /*for_update=*/true));
  const double lr = schedule_.LrAt(updates_);
  optimizer_.set_lr(lr);
  // As the actor's update: no micro-batch waits for the device (policy_actor.cc).
  algorithms::DeferredFiniteChecks finite_checks;
  TensorMetricLists metrics;
  MiniBatchPlan plan = options_.plan;  // shuffle's orders: its seed and this update's count
  plan.shuffle_seed = MixBits(plan.shuffle_seed + static_cast<uint64_t>(updates_ + 1) * kGoldenGamma);
  ValueBatch rows_now = batch;  // the rows in the current epoch's order
  const absl::StatusOr<MiniBatchResult> steps = RunMiniBatches(
      batch.input_ids.size(0), RowTokensFor(plan.micro_batch, batch.attention_mask), plan, trainable_, optimizer_,
      [&](int64_t start, int64_t rows, double share) -> absl::Status {
        const ValueBatch micro = SliceRows(rows_now, start, rows);
        const at::Tensor vpreds = Predict(micro);
        ASSIGN_OR_RETURN(const algorithms::ValueLossResult loss,
                         algorithms::ComputeValueLoss(vpreds, micro.returns.to(at::kFloat),
                                                      micro.values.to(at::kFloat), micro.response_mask,
                                                      options_.value_loss));
        (loss.loss * share).backward();
        const at::Tensor mask = micro.response_mask.to(at::kFloat);
        metrics["critic/vf_loss"].push_back(loss.loss.detach());
        metrics["critic/vf_clipfrac"].push_back(loss.vf_clipfrac);
        metrics["critic/vpred_mean"].push_back((vpreds.detach() * mask).sum() / mask.sum().clamp_min(1));
        return absl::OkStatus();
      },
      [&] { return finite_checks.Resolve(); },
      [&](const std::vector<int64_t>& order) {
        rows_now = ReorderRows(batch, order);
        return absl::OkStatus();
      });
  if (!steps.ok()) {
    return absl::Status(steps.status().code(), absl::StrCat("update_critic: ", steps.status().message()));
  }
  ++updates_;
  std::map<std::string, double> result = MeanMetrics(metrics);
  result["critic/grad_norm"] = Mean(steps->grad_norms);
  result["critic/lr"] = lr;
  return result;
}

}  // namespace rollout::workers
