#include "algorithms/optimal_token_baseline.h"

#include <ATen/ATen.h>

#include "algorithms/advantage_inputs.h"
#include "common/status_macros.h"

namespace rollout::algorithms {
namespace {

constexpr double kEpsilon = 1e-8;  // verl's default for the baseline's denominator

// The validated inputs and the per-token terms both estimators start from, in the
// rewards' dtype: [B, T] each but index [B].
struct Terms {
  at::Tensor mask;
  at::Tensor index;
  at::Tensor returns;  // G: reward to go
  at::Tensor energy;   // W: cumulative sum of the masked weights
};

absl::StatusOr<Terms> PrepareTerms(const at::Tensor& rewards, const at::Tensor& response_mask,
                                   const at::Tensor& index, const at::Tensor& old_log_probs,
                                   const at::Tensor& sum_pi_squared, const at::Tensor& rollout_is_weights) {
  RETURN_IF_ERROR(CheckRewards(rewards));
  Terms terms;
  ASSIGN_OR_RETURN(terms.mask, TokenTensorLike(response_mask, "response_mask", rewards, false));
  ASSIGN_OR_RETURN(terms.index, RowTensorLike(index, "index", rewards, false));
  ASSIGN_OR_RETURN(const at::Tensor log_probs, TokenTensorLike(old_log_probs, "old_log_probs", rewards, true));
  ASSIGN_OR_RETURN(const at::Tensor squares, TokenTensorLike(sum_pi_squared, "sum_pi_squared", rewards, true));
  at::Tensor weights = 1 - 2 * log_probs.exp() + squares;
  if (rollout_is_weights.defined()) {
    ASSIGN_OR_RETURN(const at::Tensor is_weights,
                     TokenTensorLike(rollout_is_weights, "rollout_is_weights", rewards, true));
    weights = weights * is_weights.square();
  }
  terms.returns = (rewards * terms.mask).flip({-1}).cumsum(-1).flip({-1});
  terms.energy = (weights * terms.mask).cumsum(-1);
  return terms;
}

// The baseline B [B, L] of every row at every position: over the `member` rows of its
// group, sum(G W mask) / (sum(W mask) + epsilon); 0 for a row whose group has one member
// or none; 0 in the tail of a group's unique longest member (from the second longest
// member's length on). returns, energy, mask [B, L]; member [B] bool; lengths [B] (the
// rows' mask sums).
at::Tensor GroupBaselines(const at::Tensor& returns, const at::Tensor& energy, const at::Tensor& mask,
                          const at::Tensor& index, const at::Tensor& member, const at::Tensor& lengths) {
  const DenseGroups groups = Densify(index);
  const at::Tensor& of_row = groups.of_row;
  const at::Tensor members = member.to(returns.scalar_type());
  const at::Tensor weight = energy * mask * members.unsqueeze(-1);
  const at::Tensor zeros = at::zeros({groups.count, returns.size(1)}, returns.options());
  const at::Tensor numerator = zeros.index_add(0, of_row, returns * weight);
  const at::Tensor denominator = zeros.index_add(0, of_row, weight) + kEpsilon;
  at::Tensor baseline = (numerator / denominator).index_select(0, of_row);
  const at::Tensor group_members = at::zeros({groups.count}, members.options()).index_add(0, of_row, members);
  baseline = at::where((group_members.index_select(0, of_row) > 1).unsqueeze(-1), baseline, 0);
  // The unique longest member's tail (non-members rank below every member).
  const at::Tensor length = at::where(member, lengths.to(returns.scalar_type()), -1);
  const at::Tensor lowest = at::full({groups.count}, -1, length.options());
  const at::Tensor longest = lowest.scatter_reduce(0, of_row, length, "amax", true).index_select(0, of_row);
  const at::Tensor is_longest = member.logical_and(length == longest);
  const at::Tensor longest_rows =
      at::zeros({groups.count}, members.options()).index_add(0, of_row, is_longest.to(members.scalar_type()));
  const at::Tensor second = lowest.scatter_reduce(0, of_row, at::where(is_longest, -1, length), "amax", true)
                                .index_select(0, of_row);
  const at::Tensor alone_in_tail = is_longest.logical_and(longest_rows.index_select(0, of_row) == 1)
                                       .logical_and(group_members.index_select(0, of_row) > 1);
  const at::Tensor positions = at::arange(returns.size(1), returns.options()).unsqueeze(0);
  const at::Tensor tail = alone_in_tail.unsqueeze(-1).logical_and(positions >= second.unsqueeze(-1));
  return at::where(tail, 0, baseline);
}

}  // namespace

absl::StatusOr<Advantages> OptimalTokenBaselineAdvantages(const at::Tensor& token_level_rewards,
                                                          const at::Tensor& response_mask,
                                                          const at::Tensor& index,
                                                          const at::Tensor& old_log_probs,
                                                          const at::Tensor& sum_pi_squared,
                                                          const at::Tensor& rollout_is_weights) {
  ASSIGN_OR_RETURN(const Terms terms, PrepareTerms(token_level_rewards, response_mask, index, old_log_probs,
                                                   sum_pi_squared, rollout_is_weights));
  const at::Tensor every_row = at::ones({terms.mask.size(0)}, terms.index.options().dtype(at::kBool));
  const at::Tensor baseline =
      GroupBaselines(terms.returns, terms.energy, terms.mask, terms.index, every_row, terms.mask.sum(-1));
  return Advantages{(terms.returns - baseline) * terms.mask, terms.returns};
}

absl::StatusOr<Advantages> TirOptimalTokenBaselineAdvantages(const at::Tensor& token_level_rewards,
                                                             const at::Tensor& response_mask,
                                                             const at::Tensor& index,
                                                             const at::Tensor& old_log_probs,
                                                             const at::Tensor& sum_pi_squared,
                                                             const at::Tensor& rollout_is_weights) {
  ASSIGN_OR_RETURN(const Terms terms, PrepareTerms(token_level_rewards, response_mask, index, old_log_probs,
                                                   sum_pi_squared, rollout_is_weights));
  const int64_t width = terms.mask.size(1);
  // Each masked token's number within its row; the others go to a spare column.
  const at::Tensor masked = terms.mask != 0;
  const at::Tensor number = masked.to(at::kLong).cumsum(-1) - 1;
  const at::Tensor slot = at::where(masked, number, width);
  auto compact = [&](const at::Tensor& values) {
    return at::zeros({values.size(0), width + 1}, values.options()).scatter(1, slot, values).narrow(1, 0, width);
  };
  const at::Tensor lengths = masked.sum(-1);
  const at::Tensor compact_mask =
      (at::arange(width, lengths.options()).unsqueeze(0) < lengths.unsqueeze(-1)).to(terms.mask.scalar_type());
  const at::Tensor compact_returns = compact(terms.returns);
  const at::Tensor baseline = GroupBaselines(compact_returns, compact(terms.energy), compact_mask, terms.index,
                                             lengths > 0, lengths);
  const at::Tensor advantages = (compact_returns - baseline).gather(1, number.clamp_min(0)) * terms.mask;
  return Advantages{advantages, terms.returns};
}

}  // namespace rollout::algorithms
