#include "workers/dpo_learner.h"

#include <ATen/ATen.h>

#include "absl/strings/str_cat.h"
#include "algorithms/masked_ops.h"
#include "common/status_macros.h"
#include "workers/optimizer_shards.h"
#include "workers/response_scores.h"

namespace rollout::workers {
namespace {

// [rows] summed response log-probs, differentiable when grad mode is on.
at::Tensor SummedLogProbs(const models::CausalLM& model, const PolicyBatch& batch) {
  const models::TokenScores scores = ScoreResponses(model, batch.input_ids, batch.position_ids,
                                                    batch.attention_mask, batch.responses,
                                                    models::kLogProbsOnly);
  return (scores.log_probs * batch.response_mask.to(at::kFloat)).sum(1);
}

// The DPO loss of `chosen` and `rejected` (summed log-probs of `batch`'s rows), plus
// rpo_alpha x the chosen rows' token-mean NLL; its metrics under `prefix`.
absl::StatusOr<at::Tensor> PreferenceLoss(const at::Tensor& chosen, const at::Tensor& rejected,
                                          const at::Tensor& reference_chosen, const at::Tensor& reference_rejected,
                                          const at::Tensor& chosen_mask, const DpoOptions& options,
                                          const std::string& prefix, TensorMetricLists* metrics) {
  ASSIGN_OR_RETURN(const algorithms::DpoLossResult dpo,
                   algorithms::DpoLoss(chosen, rejected, reference_chosen.to(chosen.device()),
                                       reference_rejected.to(chosen.device()), options.loss));
  at::Tensor loss = dpo.loss;
  for (const auto& [name, value] : dpo.Metrics()) (*metrics)[prefix + name].push_back(value);
  if (options.rpo_alpha > 0) {
    const at::Tensor nll = -chosen.sum() / chosen_mask.sum().clamp_min(1).to(chosen.scalar_type());
    (*metrics)[prefix + "nll_loss"].push_back(nll.detach());
    loss = loss + options.rpo_alpha * nll;
  }
  (*metrics)[prefix + "loss"].push_back(loss.detach());
  return loss;
}

absl::Status CheckPreferenceBatch(const PreferenceBatch& batch) {
  RETURN_IF_ERROR(CheckPolicyBatch(batch.chosen));
  RETURN_IF_ERROR(CheckPolicyBatch(batch.rejected));
  const int64_t rows = batch.chosen.input_ids.size(0);
  if (batch.rejected.input_ids.size(0) != rows) {
    return absl::InvalidArgumentError(absl::StrCat("preference batch: ", rows, " chosen rows but ",
                                                   batch.rejected.input_ids.size(0), " rejected"));
  }
  for (const auto& [name, tensor] :
       {std::pair<const char*, const at::Tensor*>{"reference_chosen_logps", &batch.reference_chosen_logps},
        {"reference_rejected_logps", &batch.reference_rejected_logps}}) {
    if (!tensor->defined() || tensor->dim() != 1 || tensor->size(0) != rows) {
      return absl::InvalidArgumentError(absl::StrCat("preference batch: ", name, " must be [", rows, "]"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<at::Tensor> SequenceLogProbs(const models::CausalLM& model, const PolicyBatch& batch,
                                            int64_t micro_batch_rows) {
  ASSIGN_OR_RETURN(const models::TokenScores scores,
                   ScoreResponsesNoGrad(model, batch, micro_batch_rows, models::kLogProbsOnly));
  return (scores.log_probs * batch.response_mask.to(at::kFloat)).sum(1);
}

absl::StatusOr<std::unique_ptr<DpoLearner>> DpoLearner::Create(models::CausalLM* model,
                                                               std::vector<at::Tensor*> trainable,
                                                               const DpoOptions& options) {
  RETURN_IF_ERROR(CheckMiniBatchPlan(options.plan, "dpo"));
  if (options.plan.micro_batch.max_tokens > 0) {
    return absl::InvalidArgumentError("dpo: micro-batches are counted in pairs, not under a token budget");
  }
  if (trainable.empty()) return absl::InvalidArgumentError("dpo: nothing to train");
  if (!(options.rpo_alpha >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat("dpo: rpo_alpha is ", options.rpo_alpha, "; must be >= 0"));
  }
  ASSIGN_OR_RETURN(LrSchedule schedule, LrSchedule::Create(options.lr_schedule));
  // Validate the loss options once, on a dummy pair, so a bad recipe fails at start-up.
  const at::Tensor zero = at::zeros({1});
  RETURN_IF_ERROR(algorithms::DpoLoss(zero, zero, zero, zero, options.loss).status());
  for (at::Tensor* tensor : trainable) tensor->set_requires_grad(true);
  return std::unique_ptr<DpoLearner>(
      new DpoLearner(model, std::move(trainable), options, std::move(schedule)));
}

DpoLearner::DpoLearner(models::CausalLM* model, std::vector<at::Tensor*> trainable,
                       const DpoOptions& options, LrSchedule schedule)
    : model_(model),
      trainable_(std::move(trainable)),
      options_(options),
      schedule_(std::move(schedule)),
      optimizer_(trainable_, options.adamw, ShardsFor(trainable_, options.plan.data_parallel)) {}

absl::StatusOr<std::map<std::string, double>> DpoLearner::Update(const PreferenceBatch& batch) {
  RETURN_IF_ERROR(CheckPreferenceBatch(batch));
  const double lr = schedule_.LrAt(updates_);
  optimizer_.set_lr(lr);
  model_->set_training(true);
  // As the actor's update: no micro-batch waits for the device (policy_actor.cc).
  algorithms::DeferredFiniteChecks finite_checks;
  TensorMetricLists metrics;
  const absl::StatusOr<MiniBatchResult> steps = RunMiniBatches(
      batch.chosen.input_ids.size(0), {}, options_.plan, trainable_, optimizer_,
      [&](int64_t start, int64_t rows, double share) -> absl::Status {
        const PolicyBatch chosen_rows = SliceRows(batch.chosen, start, rows);
        const at::Tensor chosen = SummedLogProbs(*model_, chosen_rows);
        const at::Tensor rejected = SummedLogProbs(*model_, SliceRows(batch.rejected, start, rows));
        ASSIGN_OR_RETURN(const at::Tensor loss,
                         PreferenceLoss(chosen, rejected, batch.reference_chosen_logps.narrow(0, start, rows),
                                        batch.reference_rejected_logps.narrow(0, start, rows),
                                        chosen_rows.response_mask, options_, "train/", &metrics));
        (loss * share).backward();
        return absl::OkStatus();
      },
      [&] { return finite_checks.Resolve(); });
  model_->set_training(false);
  if (!steps.ok()) {
    return absl::Status(steps.status().code(), absl::StrCat("dpo update: ", steps.status().message()));
  }
  ++updates_;
  std::map<std::string, double> result = MeanMetrics(metrics);
  result["train/grad_norm"] = Mean(steps->grad_norms);
  result["train/lr"] = lr;
  return result;
}

absl::StatusOr<std::map<std::string, double>> DpoLearner::Evaluate(const PreferenceBatch& batch,
                                                                   int64_t micro_batch_rows) const {
  RETURN_IF_ERROR(CheckPreferenceBatch(batch));
  ASSIGN_OR_RETURN(const at::Tensor chosen, SequenceLogProbs(*model_, batch.chosen, micro_batch_rows));
  ASSIGN_OR_RETURN(const at::Tensor rejected, SequenceLogProbs(*model_, batch.rejected, micro_batch_rows));
  TensorMetricLists metrics;
  RETURN_IF_ERROR(PreferenceLoss(chosen, rejected, batch.reference_chosen_logps, batch.reference_rejected_logps,
                                 batch.chosen.response_mask, options_, "val/", &metrics)
                      .status());
  return MeanMetrics(metrics);
}

}  // namespace rollout::workers
