// verl's optimal token baseline estimators (OTB, arXiv 2602.07078): a baseline per
// response token instead of per response, weighted by how much uncertainty a response
// has accumulated up to that token ("realized energy"), so that noisy responses move
// the baseline less. Selected by algorithm.adv_estimator optimal_token_baseline
// (single-turn) and tir_optimal_token_baseline (multi-turn); they need the actor's
// old log-probs and sum_pi_squared (actor.calculate_sum_pi_squared).
//
// For each row, with p_t = exp(old_log_probs_t) and s_t = sum_pi_squared_t (the sum over
// the vocabulary of squared probabilities):
//   G_t = sum_{j >= t} rewards_j mask_j          (reward to go; the returns)
//   w_t = (1 - 2 p_t + s_t) * rollout_is_weights_t^2   (the weights when defined)
//   W_t = sum_{j <= t} w_j mask_j
// and within each group of rows (index), per position t,
//   B_t = sum_i G_t W_t mask_t / (sum_i W_t mask_t + 1e-8),   advantage = (G_t - B_t) mask_t.
// A group of one has baseline 0 (advantage = G). Where a group's longest response is
// longer than all others (one row alone), that row's baseline is 0 from the second
// longest length on: there it would only be compared with itself (verl's
// handle_zero_tail, on by default there and not configurable).
//
// Inputs and errors follow the common contract of algorithms/advantages.h;
// old_log_probs, sum_pi_squared and rollout_is_weights are [B, T] floating and finite.
#pragma once

#include <ATen/core/Tensor.h>

#include "absl/status/statusor.h"
#include "algorithms/advantages.h"

namespace rollout::algorithms {

// verl's optimal_token_baseline: positions t are the response's columns, as above; every
// row of a group counts in its size (also rows without response tokens).
// rollout_is_weights may be undefined.
absl::StatusOr<Advantages> OptimalTokenBaselineAdvantages(const at::Tensor& token_level_rewards,
                                                          const at::Tensor& response_mask,
                                                          const at::Tensor& index,
                                                          const at::Tensor& old_log_probs,
                                                          const at::Tensor& sum_pi_squared,
                                                          const at::Tensor& rollout_is_weights);

// verl's tir_optimal_token_baseline, for multi-turn responses whose mask has holes (tool
// output): each row's masked tokens are numbered 0, 1, ... and rows are compared at
// equal numbers, not equal columns; rows without masked tokens are left out of their
// group (advantage 0). Same as optimal_token_baseline where every mask is a prefix and
// no row is empty.
absl::StatusOr<Advantages> TirOptimalTokenBaselineAdvantages(const at::Tensor& token_level_rewards,
                                                             const at::Tensor& response_mask,
                                                             const at::Tensor& index,
                                                             const at::Tensor& old_log_probs,
                                                             const at::Tensor& sum_pi_squared,
                                                             const at::Tensor& rollout_is_weights);

}  // namespace rollout::algorithms
