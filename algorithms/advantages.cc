#include "algorithms/advantages.h"

#include <ATen/ATen.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "algorithms/advantage_inputs.h"
#include "algorithms/masked_ops.h"
#include "algorithms/optimal_token_baseline.h"
#include "common/status_macros.h"

namespace rollout::algorithms {
namespace {

// Validated rewards, mask (rewards' dtype) and group ids of the outcome estimators.
struct OutcomeInputs {
  at::Tensor scores;  // [B] sum over T of rewards, unmasked (verl's token_level_rewards.sum(-1))
  at::Tensor mask;    // [B, T]
  at::Tensor index;   // [B] int64
};

absl::StatusOr<OutcomeInputs> PrepareOutcome(const at::Tensor& rewards, const at::Tensor& mask,
                                             const at::Tensor& index) {
  RETURN_IF_ERROR(CheckRewards(rewards));
  OutcomeInputs out;
  ASSIGN_OR_RETURN(out.mask, TokenTensorLike(mask, "response_mask", rewards, false));
  ASSIGN_OR_RETURN(out.index, RowTensorLike(index, "index", rewards, false));
  out.scores = rewards.sum(-1);
  return out;
}

// Statistics of each row's group, gathered back to rows: [B] each, scores' dtype.
struct RowGroupStats {
  at::Tensor size;
  at::Tensor mean;
  at::Tensor std;  // unbiased; NaN for a group of one
};

RowGroupStats GroupStats(const at::Tensor& scores, const at::Tensor& index) {
  const DenseGroups groups = Densify(index);
  const at::Tensor& inverse = groups.of_row;
  const at::Tensor zeros = at::zeros({groups.count}, scores.options());
  const at::Tensor size = zeros.index_add(0, inverse, at::ones_like(scores));
  const at::Tensor mean = zeros.index_add(0, inverse, scores) / size;
  const at::Tensor centered = scores - mean.index_select(0, inverse);
  const at::Tensor std = (zeros.index_add(0, inverse, centered * centered) / (size - 1)).sqrt();
  return {size.index_select(0, inverse), mean.index_select(0, inverse),
          std.index_select(0, inverse)};
}

// [B] per-row values broadcast over T and zeroed where masked.
at::Tensor Broadcast(const at::Tensor& per_row, const at::Tensor& mask) {
  return per_row.unsqueeze(-1) * mask;
}

absl::StatusOr<at::Tensor> Whiten(const at::Tensor& values, const at::Tensor& mask,
                                  const std::string& what) {
  return WithContext(MaskedWhiten(values, mask), absl::StrCat("whitening ", what));
}

}  // namespace

absl::StatusOr<at::Tensor> GaeRawAdvantages(const at::Tensor& token_level_rewards,
                                            const at::Tensor& values,
                                            const at::Tensor& response_mask, double gamma,
                                            double lam) {
  RETURN_IF_ERROR(CheckRewards(token_level_rewards));
  ASSIGN_OR_RETURN(const at::Tensor v,
                   TokenTensorLike(values, "values", token_level_rewards, true));
  ASSIGN_OR_RETURN(const at::Tensor mask,
                   TokenTensorLike(response_mask, "response_mask", token_level_rewards, false));
  const at::Tensor& rewards = token_level_rewards;
  at::Tensor next_value = at::zeros({rewards.size(0)}, rewards.options());
  at::Tensor last_gae = at::zeros({rewards.size(0)}, rewards.options());
  at::Tensor advantages = at::empty_like(rewards);
  for (int64_t t = rewards.size(1) - 1; t >= 0; --t) {
    const at::Tensor v_t = v.select(1, t);
    const at::Tensor m_t = mask.select(1, t);
    const at::Tensor delta = rewards.select(1, t) + gamma * next_value - v_t;
    const at::Tensor gae = delta + gamma * lam * last_gae;
    // Masked tokens pass the running value and GAE through untouched.
    next_value = v_t * m_t + (1 - m_t) * next_value;
    last_gae = gae * m_t + (1 - m_t) * last_gae;
    advantages.select(1, t).copy_(last_gae);
  }
  return advantages;
}

absl::StatusOr<Advantages> GaeAdvantages(const at::Tensor& token_level_rewards,
                                         const at::Tensor& values, const at::Tensor& response_mask,
                                         double gamma, double lam) {
  ASSIGN_OR_RETURN(const at::Tensor raw,
                   GaeRawAdvantages(token_level_rewards, values, response_mask, gamma, lam));
  const at::Tensor mask = response_mask.to(raw.device(), raw.scalar_type());
  Advantages out;
  out.returns = raw + values.to(raw.device(), raw.scalar_type());
  ASSIGN_OR_RETURN(out.advantages, Whiten(raw, mask, "advantages"));
  return out;
}

namespace {

// GRPO's per-row (s - mean) / (std + epsilon), a group of one at mean 0 and std 1; the
// std is sqrt(max(variance, variance_floor)).
absl::StatusOr<Advantages> GroupNormalized(const at::Tensor& token_level_rewards, const at::Tensor& response_mask,
                                           const at::Tensor& index, bool norm_adv_by_std_in_grpo, double epsilon,
                                           double variance_floor) {
  ASSIGN_OR_RETURN(const OutcomeInputs in,
                   PrepareOutcome(token_level_rewards, response_mask, index));
  const RowGroupStats stats = GroupStats(in.scores, in.index);
  const at::Tensor alone = stats.size == 1;
  const at::Tensor mean = at::where(alone, at::zeros_like(stats.mean), stats.mean);
  at::Tensor per_row = in.scores - mean;
  if (norm_adv_by_std_in_grpo) {
    const at::Tensor std = stats.std.square().clamp_min(variance_floor).sqrt();
    per_row = per_row / (at::where(alone, at::ones_like(std), std) + epsilon);
  }
  const at::Tensor advantages = Broadcast(per_row, in.mask);
  return Advantages{advantages, advantages};
}

}  // namespace

absl::StatusOr<Advantages> GrpoAdvantages(const at::Tensor& token_level_rewards,
                                          const at::Tensor& response_mask, const at::Tensor& index,
                                          bool norm_adv_by_std_in_grpo, double epsilon) {
  return GroupNormalized(token_level_rewards, response_mask, index, norm_adv_by_std_in_grpo, epsilon,
                         /*variance_floor=*/0);
}

absl::StatusOr<Advantages> GrpoVectorizedAdvantages(const at::Tensor& token_level_rewards,
                                                    const at::Tensor& response_mask, const at::Tensor& index,
                                                    bool norm_adv_by_std_in_grpo, double epsilon) {
  return GroupNormalized(token_level_rewards, response_mask, index, norm_adv_by_std_in_grpo, epsilon,
                         /*variance_floor=*/epsilon);
}

absl::StatusOr<Advantages> RlooAdvantages(const at::Tensor& token_level_rewards,
                                          const at::Tensor& response_mask,
                                          const at::Tensor& index) {
  ASSIGN_OR_RETURN(const OutcomeInputs in,
                   PrepareOutcome(token_level_rewards, response_mask, index));
  const RowGroupStats stats = GroupStats(in.scores, in.index);
  // n / (n - 1) * (s - mean) = s - (sum - s) / (n - 1): the mean of the other rows.
  const at::Tensor leave_one_out = (in.scores - stats.mean) * stats.size / (stats.size - 1);
  const at::Tensor per_row = at::where(stats.size == 1, in.scores, leave_one_out);
  const at::Tensor advantages = Broadcast(per_row, in.mask);
  return Advantages{advantages, advantages};
}

absl::StatusOr<Advantages> RlooVectorizedAdvantages(const at::Tensor& token_level_rewards,
                                                    const at::Tensor& response_mask, const at::Tensor& index) {
  ASSIGN_OR_RETURN(const OutcomeInputs in,
                   PrepareOutcome(token_level_rewards, response_mask, index));
  const RowGroupStats stats = GroupStats(in.scores, in.index);
  const at::Tensor leave_one_out = (in.scores - stats.mean) * stats.size / (stats.size - 1);
  const at::Tensor per_row = at::where(stats.size == 1, at::zeros_like(in.scores), leave_one_out);
  const at::Tensor advantages = Broadcast(per_row, in.mask);
  return Advantages{advantages, advantages};
}

absl::StatusOr<Advantages> GpgAdvantages(const at::Tensor& token_level_rewards,
                                         const at::Tensor& response_mask, const at::Tensor& index) {
  ASSIGN_OR_RETURN(const OutcomeInputs in,
                   PrepareOutcome(token_level_rewards, response_mask, index));
  const RowGroupStats stats = GroupStats(in.scores, in.index);
  const at::Tensor mean = at::where(stats.size == 1, at::zeros_like(stats.mean), stats.mean);
  const at::Tensor rewarded = (in.scores != 0).sum().clamp_min(1).to(in.scores.scalar_type());
  const at::Tensor alpha = static_cast<double>(in.scores.size(0)) / rewarded;
  const at::Tensor advantages = Broadcast(alpha * (in.scores - mean), in.mask);
  return Advantages{advantages, advantages};
}

absl::StatusOr<Advantages> OpoAdvantages(const at::Tensor& token_level_rewards,
                                         const at::Tensor& response_mask, const at::Tensor& index) {
  ASSIGN_OR_RETURN(const OutcomeInputs in,
                   PrepareOutcome(token_level_rewards, response_mask, index));
  const DenseGroups groups = Densify(in.index);
  const at::Tensor lengths = in.mask.sum(-1);
  const at::Tensor zeros = at::zeros({groups.count}, in.scores.options());
  const at::Tensor group_rows = zeros.index_add(0, groups.of_row, at::ones_like(lengths));
  const at::Tensor group_lengths = zeros.index_add(0, groups.of_row, lengths);
  const at::Tensor weighted = zeros.index_add(0, groups.of_row, lengths * in.scores);
  // A group of one, or one whose rows are all empty, has baseline 0.
  const at::Tensor baseline = at::where((group_rows > 1).logical_and(group_lengths > 0),
                                        weighted / group_lengths.clamp_min(1), zeros);
  const at::Tensor advantages = Broadcast(in.scores - baseline.index_select(0, groups.of_row), in.mask);
  return Advantages{advantages, advantages};
}

absl::StatusOr<Advantages> GrpoPassKAdvantages(const at::Tensor& token_level_rewards,
                                               const at::Tensor& response_mask,
                                               const at::Tensor& index,
                                               bool norm_adv_by_std_in_grpo, double epsilon) {
  ASSIGN_OR_RETURN(const OutcomeInputs in,
                   PrepareOutcome(token_level_rewards, response_mask, index));
  const RowGroupStats stats = GroupStats(in.scores, in.index);
  const at::Tensor lonely = (stats.size < 2).nonzero();
  if (lonely.numel() > 0) {
    const int64_t row = lonely[0].item<int64_t>();
    return absl::InvalidArgumentError(absl::StrCat(
        "needs at least 2 responses per prompt (rollout.n >= 2); row ", row, "'s group (index ",
        in.index[row].item<int64_t>(), ") has 1"));
  }
  const DenseGroups groups = Densify(in.index);
  const int64_t rows = in.scores.size(0);
  const at::Tensor empty = at::zeros({groups.count}, in.scores.options());
  const at::Tensor best = empty.scatter_reduce(0, groups.of_row, in.scores, "amax", false);
  // The group's first row holding its best score wins; the runner-up is the best of the rest
  // (equal to the best on a tie, which leaves the winner an advantage of 0).
  const at::Tensor row_ids = at::arange(rows, in.index.options());
  const at::Tensor is_best = in.scores == best.index_select(0, groups.of_row);
  const at::Tensor winner =
      at::full({groups.count}, rows, row_ids.options())
          .scatter_reduce(0, groups.of_row, at::where(is_best, row_ids, at::full_like(row_ids, rows)),
                          "amin", false);
  const at::Tensor wins = row_ids == winner.index_select(0, groups.of_row);
  const at::Tensor others = at::where(wins, at::full_like(in.scores, -INFINITY), in.scores);
  const at::Tensor runner_up = empty.scatter_reduce(0, groups.of_row, others, "amax", false);
  at::Tensor margin = (best - runner_up).index_select(0, groups.of_row);
  if (norm_adv_by_std_in_grpo) margin = margin / (stats.std + epsilon);
  const at::Tensor advantages = Broadcast(at::where(wins, margin, at::zeros_like(margin)), in.mask);
  return Advantages{advantages, advantages};
}

absl::StatusOr<Advantages> ReinforcePlusPlusAdvantages(const at::Tensor& token_level_rewards,
                                                       const at::Tensor& response_mask,
                                                       double gamma) {
  RETURN_IF_ERROR(CheckRewards(token_level_rewards));
  ASSIGN_OR_RETURN(const at::Tensor mask,
                   TokenTensorLike(response_mask, "response_mask", token_level_rewards, false));
  const at::Tensor& rewards = token_level_rewards;
  at::Tensor running = at::zeros({rewards.size(0)}, rewards.options());
  Advantages out;
  out.returns = at::empty_like(rewards);
  for (int64_t t = rewards.size(1) - 1; t >= 0; --t) {
    running = rewards.select(1, t) + gamma * running;
    out.returns.select(1, t).copy_(running);
    running = running * mask.select(1, t);  // restart after a masked token (EOS padding)
  }
  ASSIGN_OR_RETURN(const at::Tensor whitened, Whiten(out.returns, mask, "returns"));
  out.advantages = whitened * mask;
  return out;
}

absl::StatusOr<Advantages> ReinforcePlusPlusBaselineAdvantages(
    const at::Tensor& token_level_rewards, const at::Tensor& response_mask,
    const at::Tensor& index) {
  ASSIGN_OR_RETURN(const OutcomeInputs in,
                   PrepareOutcome(token_level_rewards, response_mask, index));
  const RowGroupStats stats = GroupStats(in.scores, in.index);
  const at::Tensor baseline = at::where(stats.size == 1, at::zeros_like(stats.mean), stats.mean);
  const at::Tensor centered = Broadcast(in.scores - baseline, in.mask);
  ASSIGN_OR_RETURN(const at::Tensor whitened, Whiten(centered, in.mask, "advantages"));
  const at::Tensor advantages = whitened * in.mask;
  return Advantages{advantages, advantages};
}

absl::StatusOr<Advantages> RemaxAdvantages(const at::Tensor& token_level_rewards,
                                           const at::Tensor& reward_baselines,
                                           const at::Tensor& response_mask) {
  RETURN_IF_ERROR(CheckRewards(token_level_rewards));
  ASSIGN_OR_RETURN(const at::Tensor mask,
                   TokenTensorLike(response_mask, "response_mask", token_level_rewards, false));
  ASSIGN_OR_RETURN(const at::Tensor baselines,
                   RowTensorLike(reward_baselines, "reward_baselines", token_level_rewards, true));
  Advantages out;
  out.returns = (token_level_rewards * mask).flip({-1}).cumsum(-1).flip({-1});
  out.advantages = out.returns - Broadcast(baselines, mask);
  return out;
}

namespace {

using EstimatorFn = absl::StatusOr<Advantages> (*)(const AdvantageInputs&, const AdvantageOptions&);
struct Estimator {
  const char* name;
  EstimatorFn run;
};

// verl's AdvantageEstimator names; AdvantageEstimatorNames() lists them in this order.
const Estimator kEstimators[] = {
    {"gae",
     [](const AdvantageInputs& in, const AdvantageOptions& o) {
       return GaeAdvantages(in.token_level_rewards, in.values, in.response_mask, o.gamma, o.lam);
     }},
    {"grpo",
     [](const AdvantageInputs& in, const AdvantageOptions& o) {
       return GrpoAdvantages(in.token_level_rewards, in.response_mask, in.index,
                             o.norm_adv_by_std_in_grpo, o.epsilon);
     }},
    {"rloo",
     [](const AdvantageInputs& in, const AdvantageOptions&) {
       return RlooAdvantages(in.token_level_rewards, in.response_mask, in.index);
     }},
    {"reinforce_plus_plus",
     [](const AdvantageInputs& in, const AdvantageOptions& o) {
       return ReinforcePlusPlusAdvantages(in.token_level_rewards, in.response_mask, o.gamma);
     }},
    {"reinforce_plus_plus_baseline",
     [](const AdvantageInputs& in, const AdvantageOptions&) {
       return ReinforcePlusPlusBaselineAdvantages(in.token_level_rewards, in.response_mask,
                                                  in.index);
     }},
    {"remax",
     [](const AdvantageInputs& in, const AdvantageOptions&) {
       return RemaxAdvantages(in.token_level_rewards, in.reward_baselines, in.response_mask);
     }},
    {"gpg",
     [](const AdvantageInputs& in, const AdvantageOptions&) {
       return GpgAdvantages(in.token_level_rewards, in.response_mask, in.index);
     }},
    {"opo",
     [](const AdvantageInputs& in, const AdvantageOptions&) {
       return OpoAdvantages(in.token_level_rewards, in.response_mask, in.index);
     }},
    {"grpo_passk",
     [](const AdvantageInputs& in, const AdvantageOptions& o) {
       return GrpoPassKAdvantages(in.token_level_rewards, in.response_mask, in.index,
                                  o.norm_adv_by_std_in_grpo, o.epsilon);
     }},
    {"grpo_vectorized",
     [](const AdvantageInputs& in, const AdvantageOptions& o) {
       return GrpoVectorizedAdvantages(in.token_level_rewards, in.response_mask, in.index,
                                       o.norm_adv_by_std_in_grpo, o.epsilon);
     }},
    {"rloo_vectorized",
     [](const AdvantageInputs& in, const AdvantageOptions&) {
       return RlooVectorizedAdvantages(in.token_level_rewards, in.response_mask, in.index);
     }},
    {"optimal_token_baseline",
     [](const AdvantageInputs& in, const AdvantageOptions&) {
       return OptimalTokenBaselineAdvantages(in.token_level_rewards, in.response_mask, in.index, in.old_log_probs,
                                             in.sum_pi_squared, in.rollout_is_weights);
     }},
    {"tir_optimal_token_baseline",
     [](const AdvantageInputs& in, const AdvantageOptions&) {
       return TirOptimalTokenBaselineAdvantages(in.token_level_rewards, in.response_mask, in.index,
                                                in.old_log_probs, in.sum_pi_squared, in.rollout_is_weights);
     }},
};

}  // namespace

const std::vector<std::string>& AdvantageEstimatorNames() {
  static const std::vector<std::string>* const kNames = [] {
    auto* names = new std::vector<std::string>();
    for (const Estimator& estimator : kEstimators) names->push_back(estimator.name);
    return names;
  }();
  return *kNames;
}

absl::StatusOr<Advantages> ComputeAdvantages(const std::string& adv_estimator,
                                             const AdvantageInputs& inputs,
                                             const AdvantageOptions& options) {
  for (const Estimator& estimator : kEstimators) {
    if (adv_estimator == estimator.name) {
      return WithContext(estimator.run(inputs, options), adv_estimator);
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown adv_estimator '", adv_estimator,
                   "'; valid: ", absl::StrJoin(AdvantageEstimatorNames(), ", ")));
}

}  // namespace rollout::algorithms
