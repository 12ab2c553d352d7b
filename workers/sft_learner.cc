#include "workers/sft_learner.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include "absl/strings/str_cat.h"
#include "algorithms/loss_aggregation.h"
#include "algorithms/masked_ops.h"
#include "common/status_macros.h"
#include "workers/optimizer_shards.h"
#include "workers/response_scores.h"

namespace rollout::workers {
namespace {

// Token-mean negative log-likelihood of the response tokens of `batch`.
absl::StatusOr<at::Tensor> ResponseNll(const models::CausalLM& model, const PolicyBatch& batch) {
  const models::TokenScores scores = ScoreResponses(model, batch.input_ids, batch.position_ids,
                                                    batch.attention_mask, batch.responses,
                                                    models::kLogProbsOnly);
  return algorithms::AggregateLoss(-scores.log_probs, batch.response_mask, "token-mean");
}

}  // namespace

absl::StatusOr<std::unique_ptr<SftLearner>> SftLearner::Create(models::CausalLM* model,
                                                               std::vector<at::Tensor*> trainable,
                                                               const SftOptions& options) {
  RETURN_IF_ERROR(CheckMiniBatchPlan(options.plan, "sft"));
  if (trainable.empty()) return absl::InvalidArgumentError("sft: nothing to train");
  ASSIGN_OR_RETURN(LrSchedule schedule, LrSchedule::Create(options.lr_schedule));
  for (at::Tensor* tensor : trainable) tensor->set_requires_grad(true);
  return std::unique_ptr<SftLearner>(
      new SftLearner(model, std::move(trainable), options, std::move(schedule)));
}

SftLearner::SftLearner(models::CausalLM* model, std::vector<at::Tensor*> trainable,
                       const SftOptions& options, LrSchedule schedule)
    : model_(model),
      trainable_(std::move(trainable)),
      options_(options),
      schedule_(std::move(schedule)),
      optimizer_(trainable_, options.adamw, ShardsFor(trainable_, options.plan.data_parallel)) {}

absl::StatusOr<std::map<std::string, double>> SftLearner::Update(const PolicyBatch& batch) {
  RETURN_IF_ERROR(CheckPolicyBatch(batch));
  const double lr = schedule_.LrAt(updates_);
  optimizer_.set_lr(lr);
  model_->set_training(true);
  // As the actor's update: no micro-batch waits for the device (policy_actor.cc).
  algorithms::DeferredFiniteChecks finite_checks;
  TensorMetricLists metrics;
  const absl::StatusOr<MiniBatchResult> steps = RunMiniBatches(
      batch.input_ids.size(0), RowTokensFor(options_.plan.micro_batch, batch.attention_mask), options_.plan,
      trainable_, optimizer_,
      [&](int64_t start, int64_t rows, double share) -> absl::Status {
        ASSIGN_OR_RETURN(const at::Tensor loss, ResponseNll(*model_, SliceRows(batch, start, rows)));
        (loss * share).backward();
        metrics["train/loss"].push_back(loss.detach());
        return absl::OkStatus();
      },
      [&] { return finite_checks.Resolve(); });
  model_->set_training(false);
  if (!steps.ok()) {
    return absl::Status(steps.status().code(), absl::StrCat("sft update: ", steps.status().message()));
  }
  ++updates_;
  std::map<std::string, double> result = MeanMetrics(metrics);
  result["train/grad_norm"] = Mean(steps->grad_norms);
  result["train/lr"] = lr;
  return result;
}

absl::StatusOr<double> SftLearner::Loss(const PolicyBatch& batch, int64_t micro_batch_rows) const {
  RETURN_IF_ERROR(CheckPolicyBatch(batch));
  if (micro_batch_rows < 1) {
    return absl::InvalidArgumentError(absl::StrCat("micro-batch rows is ", micro_batch_rows, "; must be >= 1"));
  }
  c10::NoGradGuard no_grad;
  // Weighted by response tokens, so the result is the token mean over the whole batch.
  double total = 0, tokens = 0;
  const int64_t rows = batch.input_ids.size(0);
  for (int64_t start = 0; start < rows; start += micro_batch_rows) {
    const PolicyBatch micro = SliceRows(batch, start, std::min(micro_batch_rows, rows - start));
    ASSIGN_OR_RETURN(const at::Tensor loss, ResponseNll(*model_, micro));
    const double count = micro.response_mask.sum().item<double>();
    total += loss.item<double>() * count;
    tokens += count;
  }
  return tokens > 0 ? total / tokens : 0.0;
}

}  // namespace rollout::workers
