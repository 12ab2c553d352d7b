#include "controller/ppo_step.h"

#include <ATen/ATen.h>

#include <random>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "algorithms/kl.h"
#include "algorithms/pf_ppo.h"
#include "algorithms/rollout_correction.h"
#include "algorithms/variance_proxy.h"
#include "common/mix_bits.h"
#include "common/rollout_correction_config.h"
#include "common/status_macros.h"

namespace rollout::controller {
namespace {

// mean / max / min of `values` over the entries where `mask` is set (0 for none).
void AddStats(const std::string& prefix, const at::Tensor& values, const at::Tensor& mask,
              std::map<std::string, double>* metrics) {
  const at::Tensor selected = values.masked_select(mask.to(at::kBool));
  const bool empty = selected.numel() == 0;
  (*metrics)[prefix + "/mean"] = empty ? 0 : selected.mean().item<double>();
  (*metrics)[prefix + "/max"] = empty ? 0 : selected.max().item<double>();
  (*metrics)[prefix + "/min"] = empty ? 0 : selected.min().item<double>();
}

void AddLengthStats(const std::string& prefix, const at::Tensor& lengths, int64_t limit,
                    std::map<std::string, double>* metrics) {
  const at::Tensor as_float = lengths.to(at::kDouble);
  AddStats(prefix, as_float, at::ones_like(as_float), metrics);
  (*metrics)[prefix + "/clip_ratio"] =
      lengths.numel() == 0 ? 0 : (lengths >= limit).to(at::kDouble).mean().item<double>();
}

}  // namespace

at::Tensor GroupIds(const std::vector<std::string>& uids) {
  std::unordered_map<std::string, int64_t> ids;
  at::Tensor index = at::empty({static_cast<int64_t>(uids.size())}, at::kLong);
  auto out = index.accessor<int64_t, 1>();
  for (size_t i = 0; i < uids.size(); ++i) {
    out[static_cast<int64_t>(i)] = ids.emplace(uids[i], static_cast<int64_t>(ids.size())).first->second;
  }
  return index;
}

absl::StatusOr<at::Tensor> TokenLevelScores(const std::vector<double>& scores,
                                            const at::Tensor& response_mask) {
  const int64_t rows = response_mask.size(0);
  if (static_cast<int64_t>(scores.size()) != rows) {
    return absl::InvalidArgumentError(
        absl::StrCat(scores.size(), " reward scores for ", rows, " responses"));
  }
  at::Tensor token_scores = at::zeros(response_mask.sizes(), at::kFloat);
  const at::Tensor counted = response_mask.to(at::kLong).contiguous();
  auto out = token_scores.accessor<float, 2>();
  auto mask = counted.accessor<int64_t, 2>();
  const int64_t width = counted.size(1);
  if (width == 0) return token_scores;
  for (int64_t row = 0; row < rows; ++row) {
    // The last counted token (a multi-turn response's tool turns are not counted); a
    // response with none, the last column (verl's index valid_response_length - 1 = -1).
    int64_t last = width - 1;
    for (int64_t t = width - 1; t >= 0; --t) {
      if (mask[row][t] != 0) {
        last = t;
        break;
      }
    }
    out[row][last] = static_cast<float>(scores[static_cast<size_t>(row)]);
  }
  return token_scores;
}

absl::StatusOr<std::map<std::string, double>> ComputeAdvantageColumns(const AdvantageStep& step,
                                                                      Batch* batch) {
  ASSIGN_OR_RETURN(const at::Tensor scores, batch->Tensor("token_level_scores"));
  ASSIGN_OR_RETURN(const at::Tensor mask, batch->Tensor("response_mask"));
  ASSIGN_OR_RETURN(const std::vector<std::string> uids, batch->Strings("uid"));
  std::map<std::string, double> metrics;
  at::Tensor rewards = scores;
  if (step.use_kl_in_reward) {
    if (step.kl_controller == nullptr) {
      return absl::InvalidArgumentError("algorithm.use_kl_in_reward needs a KL controller");
    }
    ASSIGN_OR_RETURN(const at::Tensor old_log_probs, batch->Tensor("old_log_probs"));
    ASSIGN_OR_RETURN(const at::Tensor ref_log_prob, batch->Tensor("ref_log_prob"));
    ASSIGN_OR_RETURN(const algorithms::KlInRewardResult kl,
                     algorithms::ApplyKlPenalty(scores, old_log_probs, ref_log_prob, mask,
                                                step.kl_penalty, *step.kl_controller));
    rewards = kl.token_level_rewards;
    metrics = kl.Metrics();
  }
  algorithms::AdvantageInputs inputs;
  inputs.token_level_rewards = rewards;
  inputs.response_mask = mask;
  inputs.index = GroupIds(uids);
  // The columns only some estimators read (algorithms/advantages.h), where present.
  for (auto [column, input] : {std::pair{"values", &inputs.values}, std::pair{"old_log_probs", &inputs.old_log_probs},
                               std::pair{"sum_pi_squared", &inputs.sum_pi_squared},
                               std::pair{"rollout_is_weights", &inputs.rollout_is_weights}}) {
    if (batch->HasTensor(column)) {
      ASSIGN_OR_RETURN(*input, batch->Tensor(column));
    }
  }
  ASSIGN_OR_RETURN(const algorithms::Advantages advantages,
                   algorithms::ComputeAdvantages(step.adv_estimator, inputs, step.options));
  RETURN_IF_ERROR(batch->AddTensor("token_level_rewards", rewards));
  RETURN_IF_ERROR(batch->AddTensor("advantages", advantages.advantages));
  RETURN_IF_ERROR(batch->AddTensor("returns", advantages.returns));
  return metrics;
}

absl::Status ResampleForPfPpo(const config::AlgorithmConfig& algorithm, uint64_t seed, int64_t step, Batch* batch) {
  if (!algorithm.use_pf_ppo() || batch->empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(const at::Tensor scores, batch->Tensor("token_level_scores"));
  algorithms::PfPpoOptions options;
  options.reweight_method = algorithm.pf_ppo().reweight_method();
  options.weight_pow = algorithm.pf_ppo().weight_pow();
  ASSIGN_OR_RETURN(const at::Tensor weights, algorithms::PfPpoWeights(scores.sum(-1), options));
  std::mt19937_64 generator(MixBits(seed + static_cast<uint64_t>(step + 1) * kGoldenGamma));
  ASSIGN_OR_RETURN(*batch, batch->Reorder(algorithms::SampleWithReplacement(weights, batch->size(), generator)));
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, double>> DataMetrics(const Batch& batch) {
  ASSIGN_OR_RETURN(const at::Tensor mask, batch.Tensor("response_mask"));
  ASSIGN_OR_RETURN(const at::Tensor scores, batch.Tensor("token_level_scores"));
  ASSIGN_OR_RETURN(const at::Tensor rewards, batch.Tensor("token_level_rewards"));
  ASSIGN_OR_RETURN(const at::Tensor advantages, batch.Tensor("advantages"));
  ASSIGN_OR_RETURN(const at::Tensor returns, batch.Tensor("returns"));
  ASSIGN_OR_RETURN(const at::Tensor attention_mask, batch.Tensor("attention_mask"));
  ASSIGN_OR_RETURN(const at::Tensor prompts, batch.Tensor("prompts"));
  std::map<std::string, double> metrics;
  const at::Tensor rows = at::ones({mask.size(0)}, at::kBool);
  AddStats("critic/score", scores.sum(1), rows, &metrics);
  AddStats("critic/rewards", rewards.sum(1), rows, &metrics);
  AddStats("critic/advantages", advantages, mask, &metrics);
  AddStats("critic/returns", returns, mask, &metrics);
  if (batch.HasTensor("values")) {
    ASSIGN_OR_RETURN(const at::Tensor values, batch.Tensor("values"));
    AddStats("critic/values", values, mask, &metrics);
    // The share of the returns' variance the values explain (unbiased variances, as verl).
    const at::Tensor valid = mask.to(at::kBool);
    const at::Tensor valid_returns = returns.masked_select(valid).to(at::kDouble);
    const at::Tensor errors = valid_returns - values.masked_select(valid).to(at::kDouble);
    metrics["critic/vf_explained_var"] =
        valid_returns.numel() < 2 ? 0 : (1.0 - errors.var() / (valid_returns.var() + 1e-5)).item<double>();
  }
  const int64_t prompt_width = prompts.size(1);
  // From the attention mask, as verl: rejection sampling (ApplyRolloutCorrection) may
  // have taken tokens out of the response mask.
  const at::Tensor response_attention = attention_mask.narrow(1, prompt_width, mask.size(1));
  AddLengthStats("response_length", response_attention.to(at::kLong).sum(1), mask.size(1), &metrics);
  AddLengthStats("prompt_length", attention_mask.narrow(1, 0, prompt_width).to(at::kLong).sum(1),
                 prompt_width, &metrics);
  if (batch.HasTensor("num_turns")) {  // multi-turn rollouts
    ASSIGN_OR_RETURN(const at::Tensor num_turns, batch.Tensor("num_turns"));
    const at::Tensor turns = num_turns.to(at::kDouble);
    metrics["num_turns/min"] = turns.min().item<double>();
    metrics["num_turns/max"] = turns.max().item<double>();
    metrics["num_turns/mean"] = turns.mean().item<double>();
  }
  return metrics;
}

bool CorrectsForRolloutLogProbs(const config::RolloutCorrectionConfig& correction) {
  return !correction.rollout_is().empty() || !correction.rollout_rs().empty() ||
         correction.rollout_token_veto_threshold() > 0;
}

absl::Status CheckRolloutCorrection(const config::RolloutCorrectionConfig& correction) {
  if (correction.use_policy_gradient() && !correction.bypass_mode()) {
    return absl::InvalidArgumentError(
        "algorithm.rollout_correction.use_policy_gradient needs bypass_mode=true: the policy-gradient loss anchors "
        "to the rollout's log-probs, with no old-log-prob pass");
  }
  if (CorrectsForRolloutLogProbs(correction) && correction.bypass_mode() && !correction.use_policy_gradient()) {
    return absl::InvalidArgumentError(
        "algorithm.rollout_correction.rollout_is / rollout_rs / rollout_token_veto_threshold with bypass_mode: "
        "the rollout's log-probs already anchor the ratio, so every ratio would be 1; set bypass_mode=false to "
        "correct the old log-probs' ratio to the rollout's, use_policy_gradient=true to weigh the policy gradient "
        "by the current policy's ratio to the rollout's, or unset them");
  }
  const auto [lower, upper] = config::RolloutRejectionBounds(correction);
  if (!correction.rollout_rs().empty() && !(lower < upper)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "algorithm.rollout_correction: rejection sampling keeps ratios in [rollout_rs_threshold_lower, "
        "rollout_rs_threshold] = [", lower, ", ", upper, "], which is empty (the lower bound defaults to 1 / the "
        "upper, the upper to rollout_is_threshold)"));
  }
  return absl::OkStatus();
}

absl::Status ApplyRolloutCorrection(const config::RolloutCorrectionConfig& correction, Batch* batch,
                                    std::map<std::string, double>* metrics) {
  if (!CorrectsForRolloutLogProbs(correction)) return absl::OkStatus();
  ASSIGN_OR_RETURN(at::Tensor old_log_probs, batch->Tensor("old_log_probs"));
  ASSIGN_OR_RETURN(at::Tensor rollout_log_probs, batch->Tensor("rollout_log_probs"));
  ASSIGN_OR_RETURN(const at::Tensor response_mask, batch->Tensor("response_mask"));
  // Masked positions carry no log-prob (old_log_probs may be NaN there); only the
  // response tokens count.
  const at::Tensor counted = response_mask.to(at::kBool);
  old_log_probs = old_log_probs.masked_fill(~counted, 0);
  rollout_log_probs = rollout_log_probs.masked_fill(~counted, 0);
  std::vector<std::pair<std::string, at::Tensor>> named;
  if (!correction.rollout_is().empty()) {
    algorithms::RolloutIsOptions options;
    options.level = correction.rollout_is();
    options.threshold = correction.rollout_is_threshold();
    options.batch_normalize = correction.rollout_is_batch_normalize();
    ASSIGN_OR_RETURN(const algorithms::RolloutIsWeights is, algorithms::ComputeRolloutIsWeights(
                                                                old_log_probs, rollout_log_probs, response_mask, options));
    for (auto& metric : algorithms::NamedMetrics(is)) named.push_back(std::move(metric));
    RETURN_IF_ERROR(batch->AddTensor("rollout_is_weights", is.weights));
  }
  if (!correction.rollout_rs().empty() || correction.rollout_token_veto_threshold() > 0) {
    algorithms::RolloutRejectionOptions options;
    options.level = correction.rollout_rs();
    const config::RejectionBounds bounds = config::RolloutRejectionBounds(correction);
    options.lower = bounds.lower;
    options.upper = bounds.upper;
    options.veto_threshold = correction.rollout_token_veto_threshold();
    ASSIGN_OR_RETURN(const algorithms::RolloutRejection rejection,
                     algorithms::ComputeRolloutRejection(old_log_probs, rollout_log_probs, response_mask, options));
    for (auto& metric : algorithms::NamedMetrics(rejection)) named.push_back(std::move(metric));
    RETURN_IF_ERROR(batch->AddTensor("response_mask", rejection.keep.to(response_mask.scalar_type())));
  }
  for (const auto& [name, value] : named) (*metrics)[name] = value.item<double>();
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, double>> VarianceProxyMetrics(
    const Batch& batch, const std::map<std::string, double>& step_metrics) {
  if (!batch.HasTensor("sum_pi_squared")) return std::map<std::string, double>();
  algorithms::VarianceProxyInputs inputs;
  ASSIGN_OR_RETURN(inputs.old_log_probs, batch.Tensor("old_log_probs"));
  ASSIGN_OR_RETURN(inputs.sum_pi_squared, batch.Tensor("sum_pi_squared"));
  ASSIGN_OR_RETURN(inputs.advantages, batch.Tensor("advantages"));
  ASSIGN_OR_RETURN(inputs.response_mask, batch.Tensor("response_mask"));
  if (batch.HasTensor("rollout_is_weights")) {
    ASSIGN_OR_RETURN(inputs.rollout_is_weights, batch.Tensor("rollout_is_weights"));
  }
  const auto grad_norm = step_metrics.find("actor/grad_norm");
  return algorithms::VarianceProxyMetrics(
      inputs, grad_norm == step_metrics.end() ? std::nullopt : std::optional<double>(grad_norm->second));
}

}  // namespace rollout::controller
