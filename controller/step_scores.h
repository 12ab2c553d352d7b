// How a PPO / GRPO step's responses get their scores (verl's reward phase): from the
// reward runner (reward.*: rule-based functions, plug-ins, a reward service), or from a
// reward model (reward_model.enable: its worker group), then DAPO's overlong shaping
// (reward.overlong_buffer) of the rule-based scores.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/batch.h"
#include "controller/dataset.h"
#include "controller/worker_group.h"
#include "proto/recipe.pb.h"
#include "rewards/reward_runner.h"

namespace rollout::controller {

// The reward runner's scores of `generated`'s rows (its string column response_text),
// row r answering examples[r / n]. Each reward function sees the example's extra_info as
// verl's reward loop extends it: in a multi-turn rollout (`generated` has num_turns,
// turn_scores and tool_rewards) with "turn_scores" (the row's simulated user turns'
// scores) and "tool_rewards" (its tool calls' rewards), then always with "num_turns" (2
// for a single-turn response: the prompt and the reply) and "rollout_reward_scores" ({}). Adds
// the failures to `metrics`' reward/timeouts and reward/errors (failed samples score 0)
// and logs the first.
absl::StatusOr<std::vector<rewards::ScoredSample>> ScoreWithRewardRunner(
    rewards::RewardRunner& runner, const Batch& generated, const std::vector<const PromptExample*>& examples,
    int n, std::map<std::string, double>* metrics);

// The reward model's scores of `generated`'s sequences (ppo_worker_calls.h
// ComputeRewardModelScores), as samples with no extras. `prompts`: the rows the rollout
// was asked to generate from (strings prompt, prompt_format).
absl::StatusOr<std::vector<rewards::ScoredSample>> ScoreWithRewardModel(WorkerGroup& reward_model,
                                                                        const Batch& generated,
                                                                        const Batch& prompts);

// DAPO's overlong reward shaping (reward.overlong_buffer) of `scores`, as verl's DAPO
// reward manager applies it, adding reward/overlong_penalty/mean and
// reward/overlong_fraction to `metrics`; the scores unchanged when it is off.
// `response_attention` [N, R]: attention_mask's response part, so a multi-turn
// response's length counts its tool turns, as verl measures it.
absl::StatusOr<std::vector<double>> ShapeOverlong(const config::Recipe& recipe, const std::vector<double>& scores,
                                                  const at::Tensor& response_attention,
                                                  std::map<std::string, double>* metrics);

}  // namespace rollout::controller
