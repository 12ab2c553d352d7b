// DAPO's two batch-shaping pieces (https://arxiv.org/abs/2503.14476), as verl runs them:
// the overlong reward shaping of its DAPO reward manager, and the dynamic-sampling
// filter of its DAPO trainer (`algorithm.filter_groups`). Pure tensor math; the caller
// decides what to do with the shaped scores and the keep mask.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "absl/status/statusor.h"

namespace rollout::algorithms {

// `reward_model.overlong_buffer.*` (defaults as the recipe schema), plus verl's
// max_resp_len (`data.max_response_length`), which the reward manager is given.
struct OverlongBufferOptions {
  bool enable = false;
  int64_t len = 0;                  // L_buf: the last L_buf tokens of the budget are penalised
  double penalty_factor = 1.0;      // -penalty_factor is the penalty at l = L_max
  int64_t max_response_length = 0;  // L_max
};

struct OverlongShaping {
  at::Tensor scores;     // [B] input scores plus penalties
  at::Tensor penalties;  // [B] <= 0; < 0 marks an overlong response (verl's `overlong` metric)
};

// scores: [B] floating, one per response (what the reward function returned).
// response_lengths: [B] integral, valid response tokens per row (response_mask.sum(-1)),
// each in [0, max_response_length]. Results in the scores' dtype and device.
// With enable: penalty = min(-(l - (L_max - L_buf)) / L_buf * penalty_factor, 0), so 0 up
// to L_max - L_buf tokens, then falling linearly to -penalty_factor at l = L_max.
// Without enable: penalties are 0 and scores pass through.
// InvalidArgument for wrong shapes/dtypes, non-finite scores, enable with len <= 0 or
// max_response_length <= 0, or a length outside [0, max_response_length].
// len > max_response_length is accepted, as verl accepts it with a warning: every length
// is then penalised.
absl::StatusOr<OverlongShaping> ShapeOverlongScores(const at::Tensor& scores,
                                                    const at::Tensor& response_lengths,
                                                    const OverlongBufferOptions& options);

struct GroupFilter {
  at::Tensor keep;              // [B] bool on the metric's device: row's group is kept
  int64_t num_kept_groups = 0;  // verl's num_prompt_in_batch increment
};

// Dynamic sampling (verl's filter_groups): a group of rows sharing an id is kept when its
// metric values are not all equal (verl: np.std > 0) or it has a single row; a group
// whose responses all scored the same gives GRPO no signal and is dropped.
// metric: [B] floating, integral or bool: the `filter_groups.metric` per row, which the
//   caller computes: seq_final_reward = token_level_rewards.sum(-1), seq_reward =
//   token_level_scores.sum(-1), acc = the reward function's accuracy.
// group_ids: [B] int64, as `index` in advantages.h (uids mapped to integers).
// Equality is exact (a group's max against its min). verl's np.std can leave a rounding
// residue for identical values (three 0.1s: std ~1e-17 > 0) and then keeps the group;
// here identical values always drop it.
// InvalidArgument for wrong shapes/dtypes or non-finite metric values.
absl::StatusOr<GroupFilter> FilterGroups(const at::Tensor& metric, const at::Tensor& group_ids);

}  // namespace rollout::algorithms
