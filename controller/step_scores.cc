#include "controller/step_scores.h"

#include <ATen/ATen.h>

#include "algorithms/dapo.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "controller/ppo_worker_calls.h"

namespace rollout::controller {

absl::StatusOr<std::vector<rewards::ScoredSample>> ScoreWithRewardRunner(
    rewards::RewardRunner& runner, const Batch& generated, const std::vector<const PromptExample*>& examples,
    int n, std::map<std::string, double>* metrics) {
  ASSIGN_OR_RETURN(const std::vector<std::string> responses, generated.Strings("response_text"));
  std::vector<rewards::RewardInput> inputs(responses.size());
  for (size_t row = 0; row < responses.size(); ++row) {
    const PromptExample& example = *examples[row / static_cast<size_t>(n)];
    inputs[row].data_source = example.data_source;
    inputs[row].prompt = example.prompt.content;
    inputs[row].response = responses[row];
    inputs[row].ground_truth = example.ground_truth;
    inputs[row].extra_info = example.extra_info;
  }
  ASSIGN_OR_RETURN(std::vector<rewards::ScoredSample> results, runner.Score(inputs));
  const rewards::RewardFailures failures = rewards::CountFailures(results);
  (*metrics)["reward/timeouts"] += static_cast<double>(failures.timeouts);
  (*metrics)["reward/errors"] += static_cast<double>(failures.errors);
  if (!failures.first.empty()) {
    ROLLOUT_LOG(WARNING) << failures.errors << " reward errors and " << failures.timeouts
                         << " timeouts (scored 0); the first: " << failures.first;
  }
  return results;
}

absl::StatusOr<std::vector<rewards::ScoredSample>> ScoreWithRewardModel(WorkerGroup& reward_model,
                                                                        const Batch& generated,
                                                                        const Batch& prompts) {
  ASSIGN_OR_RETURN(const std::vector<double> scores, ComputeRewardModelScores(reward_model, generated, prompts));
  std::vector<rewards::ScoredSample> scored(scores.size());
  for (size_t row = 0; row < scores.size(); ++row) scored[row].output.score = scores[row];
  return scored;
}

absl::StatusOr<std::vector<double>> ShapeOverlong(const config::Recipe& recipe, const std::vector<double>& scores,
                                                  const at::Tensor& response_attention,
                                                  std::map<std::string, double>* metrics) {
  const config::OverlongBufferConfig& buffer = recipe.reward().overlong_buffer();
  if (!buffer.enable()) return scores;
  algorithms::OverlongBufferOptions options;
  options.enable = true;
  options.len = buffer.len();
  options.penalty_factor = buffer.penalty_factor();
  options.max_response_length = recipe.data().max_response_length();
  const at::Tensor as_tensor = at::tensor(scores, at::kDouble);
  ASSIGN_OR_RETURN(const algorithms::OverlongShaping shaped,
                   algorithms::ShapeOverlongScores(as_tensor, response_attention.to(at::kLong).sum(1), options));
  (*metrics)["reward/overlong_penalty/mean"] = shaped.penalties.mean().item<double>();
  (*metrics)["reward/overlong_fraction"] = (shaped.penalties < 0).to(at::kDouble).mean().item<double>();
  const at::Tensor contiguous = shaped.scores.contiguous();
  return std::vector<double>(contiguous.data_ptr<double>(), contiguous.data_ptr<double>() + contiguous.numel());
}

}  // namespace rollout::controller
