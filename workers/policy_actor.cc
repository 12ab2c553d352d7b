#include "workers/policy_actor.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "algorithms/kl.h"
#include "algorithms/loss_aggregation.h"
#include "algorithms/masked_ops.h"
#include "common/mix_bits.h"
#include "common/status_macros.h"
#include "workers/optimizer_shards.h"

namespace rollout::workers {
absl::StatusOr<std::unique_ptr<PolicyActor>> PolicyActor::Create(models::CausalLM* model,
                                                                 std::vector<at::Tensor*> trainable,
                                                                 const PolicyActorOptions& options) {
  RETURN_IF_ERROR(CheckMiniBatchPlan(options.plan, "policy actor"));
  if (trainable.empty()) return absl::InvalidArgumentError("policy actor: nothing to train");
  if (!(options.temperature > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("policy actor: temperature is ", options.temperature, "; must be > 0"));
  }
  ASSIGN_OR_RETURN(LrSchedule schedule, LrSchedule::Create(options.lr_schedule));
  for (at::Tensor* tensor : trainable) tensor->set_requires_grad(true);
  return std::unique_ptr<PolicyActor>(
      new PolicyActor(model, std::move(trainable), options, std::move(schedule)));
}

PolicyActor::PolicyActor(models::CausalLM* model, std::vector<at::Tensor*> trainable,
                         const PolicyActorOptions& options, LrSchedule schedule)
    : model_(model),
      trainable_(std::move(trainable)),
      options_(options),
      schedule_(std::move(schedule)),
      optimizer_(trainable_, options.adamw, ShardsFor(trainable_, options.plan.data_parallel)) {}

absl::StatusOr<models::TokenScores> PolicyActor::ComputeLogProbs(const PolicyBatch& batch,
                                                                 const MicroBatchSize& micro_batch,
                                                                 models::ScoreExtras extras) const {
  return ScoreResponsesNoGrad(*model_, batch, micro_batch, extras, options_.temperature,
                              options_.prompt_sharing);
}

absl::StatusOr<algorithms::PolicyLossResult> PolicyActor::PolicyGradientLoss(const PolicyBatch& micro,
                                                                              const at::Tensor& old_log_probs,
                                                                              const at::Tensor& log_probs,
                                                                              uint64_t selection_seed,
                                                                              TensorMetricLists* metrics) const {
  const at::Tensor advantages = micro.advantages.to(at::kFloat);
  if (options_.rollout_policy_gradient) {
    // Bypass mode: the old log-probs are the rollout's.
    ASSIGN_OR_RETURN(algorithms::RolloutPolicyGradient pg,
                     algorithms::ComputeRolloutPolicyGradient(old_log_probs, log_probs, advantages,
                                                              micro.response_mask, *options_.rollout_policy_gradient));
    for (auto& [name, value] : pg.metrics) (*metrics)[name].push_back(std::move(value));
    return std::move(pg.loss);
  }
  algorithms::PolicyLossOptions policy_loss = options_.policy_loss;
  policy_loss.selection_seed = selection_seed;
  return algorithms::ComputePolicyLoss(
      old_log_probs, log_probs, advantages, micro.response_mask, policy_loss,
      micro.rollout_is_weights.defined() ? micro.rollout_is_weights.to(at::kFloat) : at::Tensor());
}

absl::Status PolicyActor::AccumulateMicroBatch(const PolicyBatch& micro,
                                               std::optional<models::SharedPromptPacking> packed,
                                               int64_t on_policy_rows, double share,
                                               uint64_t selection_seed, TensorMetricLists* metrics) {
  const models::TokenScores scores =
      packed ? ScorePackedResponses(*model_, *packed, micro.input_ids.size(0),
                                    micro.responses.size(1), models::kWithEntropy,
                                    options_.temperature)
             : ScoreResponses(*model_, micro.input_ids, micro.position_ids, micro.attention_mask,
                              micro.responses, models::kWithEntropy, options_.temperature,
                              PromptSharing::kNever);
  const at::Tensor& mask = micro.response_mask;
  at::Tensor old_log_probs = micro.old_log_probs.to(at::kFloat);
  if (on_policy_rows > 0) {
    const at::Tensor rows = at::arange(old_log_probs.size(0), old_log_probs.options().dtype(at::kLong));
    old_log_probs = at::where((rows < on_policy_rows).unsqueeze(1), scores.log_probs.detach(), old_log_probs);
  }
  ASSIGN_OR_RETURN(const algorithms::PolicyLossResult pg,
                   PolicyGradientLoss(micro, old_log_probs, scores.log_probs, selection_seed, metrics));
  const std::string& agg_mode = options_.policy_loss.loss_agg_mode;
  const double scale_factor = options_.policy_loss.loss_scale_factor;
  ASSIGN_OR_RETURN(const at::Tensor entropy,
                   algorithms::AggregateLoss(scores.entropy, mask, agg_mode, scale_factor));
  at::Tensor loss = pg.loss;
  if (options_.entropy_coeff != 0) loss = loss - entropy * options_.entropy_coeff;
  if (options_.use_kl_loss) {
    const algorithms::TokenLossAggregator aggregate = [&](const at::Tensor& m, const at::Tensor& k) {
      return algorithms::AggregateLoss(m, k, agg_mode, scale_factor);
    };
    ASSIGN_OR_RETURN(const at::Tensor kl,
                     algorithms::KlLoss(scores.log_probs, micro.ref_log_probs.to(at::kFloat), mask,
                                        options_.kl_loss_type, aggregate));
    loss = loss + kl * options_.kl_loss_coef;
    (*metrics)["actor/kl_loss"].push_back(kl.detach());
  }
  (loss * share).backward();
  (*metrics)["actor/pg_loss"].push_back(pg.loss.detach());
  (*metrics)["actor/pg_clipfrac"].push_back(pg.pg_clipfrac);
  (*metrics)["actor/pg_clipfrac_lower"].push_back(pg.pg_clipfrac_lower);
  (*metrics)["actor/ppo_kl"].push_back(pg.ppo_kl);
  (*metrics)["actor/entropy"].push_back(entropy.detach());
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, double>> PolicyActor::Update(const PolicyBatch& batch,
                                                                  int64_t on_policy_rows) {
  RETURN_IF_ERROR(CheckPolicyBatch(batch, /*for_update=*/true, options_.use_kl_loss));
  const int64_t on_policy_limit =
      options_.plan.epochs == 1 && !options_.plan.shuffle ? options_.plan.mini_batch_rows : 0;
  if (on_policy_rows < 0 || on_policy_rows > on_policy_limit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "update_actor: ", on_policy_rows, " on-policy rows; at most ", on_policy_limit,
        " (the first mini-batch, and only with ppo_epochs 1 (", options_.plan.epochs, ") and shuffle off)"));
  }
  const double lr = schedule_.LrAt(updates_);
  optimizer_.set_lr(lr);
  model_->set_training(true);
  // Nothing in the loop waits for the device: the losses' finiteness checks are read
  // once per mini-batch, before its optimizer step, and the metrics once at the end.
  algorithms::DeferredFiniteChecks finite_checks;
  TensorMetricLists metrics;
  // Micro-batches are packed for their forwards from one host copy of the token layout,
  // so packing never waits for the device.
  const at::Tensor host_ids = batch.input_ids.cpu(), host_mask = batch.attention_mask.cpu();
  const at::Tensor host_positions = batch.position_ids.cpu();
  const std::vector<int64_t> row_tokens = RowTokensFor(options_.plan.micro_batch, host_mask);
  // clip_cov's seed for each micro-batch: the recipe's, this update's count, and the
  // micro-batch's place in the update (epochs included); shuffle's orders: its seed and
  // this update's count.
  const uint64_t update_seed = MixBits(options_.seed + static_cast<uint64_t>(updates_ + 1) * kGoldenGamma);
  MiniBatchPlan plan = options_.plan;
  plan.shuffle_seed = MixBits(plan.shuffle_seed + static_cast<uint64_t>(updates_ + 1) * kGoldenGamma);
  // The rows in the current epoch's order (the batch's, unless shuffled).
  PolicyBatch rows_now = batch;
  at::Tensor ids_now = host_ids, mask_now = host_mask, positions_now = host_positions;
  uint64_t micro_batches = 0;
  const absl::StatusOr<MiniBatchResult> steps = RunMiniBatches(
      batch.input_ids.size(0), row_tokens, plan, trainable_, optimizer_,
      [&](int64_t start, int64_t rows, double share) {
        std::optional<models::SharedPromptPacking> packed = PackForScoring(
            *model_, ids_now.narrow(0, start, rows), mask_now.narrow(0, start, rows),
            positions_now.narrow(0, start, rows), batch.responses.size(1), options_.prompt_sharing);
        return AccumulateMicroBatch(SliceRows(rows_now, start, rows), std::move(packed),
                                    std::clamp<int64_t>(on_policy_rows - start, 0, rows), share,
                                    MixBits(update_seed + ++micro_batches * kGoldenGamma), &metrics);
      },
      [&] { return finite_checks.Resolve(); },
      [&](const std::vector<int64_t>& order) {
        rows_now = ReorderRows(batch, order);
        ids_now = ReorderRows(host_ids, order);
        mask_now = ReorderRows(host_mask, order);
        positions_now = ReorderRows(host_positions, order);
        return absl::OkStatus();
      });
  model_->set_training(false);
  if (!steps.ok()) {
    return absl::Status(steps.status().code(), absl::StrCat("update_actor: ", steps.status().message()));
  }
  ++updates_;
  std::map<std::string, double> result = MeanMetrics(metrics);
  if (options_.use_kl_loss) result["actor/kl_coef"] = options_.kl_loss_coef;
  result["actor/grad_norm"] = Mean(steps->grad_norms);
  result["actor/grad_norm_nonfinite"] = static_cast<double>(steps->skipped_steps);
  result["actor/lr"] = lr;
  return result;
}

}  // namespace rollout::workers
