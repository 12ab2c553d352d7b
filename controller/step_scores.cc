#include "controller/step_scores.h"

#include <ATen/ATen.h>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "algorithms/dapo.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "controller/ppo_worker_calls.h"

namespace rollout::controller {
namespace {

using json = nlohmann::ordered_json;

// Per row of `generated`, the keys verl's reward loop adds to a row's extra_info, in its
// order (ScoreWithRewardRunner).
absl::StatusOr<std::vector<json>> RolloutExtraInfo(const Batch& generated, size_t rows) {
  std::vector<json> added(rows, json::object());
  const bool multi_turn = generated.HasTensor("num_turns");
  std::vector<int64_t> num_turns(rows, 2);
  if (multi_turn) {
    ASSIGN_OR_RETURN(const at::Tensor turns, generated.Tensor("num_turns"));
    const at::Tensor contiguous = turns.to(at::kLong).contiguous();
    num_turns.assign(contiguous.data_ptr<int64_t>(), contiguous.data_ptr<int64_t>() + contiguous.numel());
    for (const char* column : {"turn_scores", "tool_rewards"}) {
      ASSIGN_OR_RETURN(const std::vector<std::string> lists, generated.Strings(column));
      for (size_t row = 0; row < rows && row < lists.size(); ++row) {
        json list = json::parse(lists[row], nullptr, /*allow_exceptions=*/false);
        if (!list.is_array()) {
          return absl::InternalError(absl::StrCat("row ", row, "'s ", column, " is not a JSON list: ", lists[row]));
        }
        added[row][column] = std::move(list);
      }
    }
  }
  if (num_turns.size() != rows) {
    return absl::InternalError(absl::StrCat("num_turns has ", num_turns.size(), " rows; response_text ", rows));
  }
  for (size_t row = 0; row < rows; ++row) {
    added[row]["num_turns"] = num_turns[row];
    added[row]["rollout_reward_scores"] = json::object();
  }
  return added;
}

}  // namespace

absl::StatusOr<std::vector<rewards::ScoredSample>> ScoreWithRewardRunner(
    rewards::RewardRunner& runner, const Batch& generated, const std::vector<const PromptExample*>& examples,
    int n, std::map<std::string, double>* metrics) {
  ASSIGN_OR_RETURN(const std::vector<std::string> responses, generated.Strings("response_text"));
  ASSIGN_OR_RETURN(const std::vector<json> added, RolloutExtraInfo(generated, responses.size()));
  std::vector<rewards::RewardInput> inputs(responses.size());
  for (size_t row = 0; row < responses.size(); ++row) {
    const PromptExample& example = *examples[row / static_cast<size_t>(n)];
    inputs[row].data_source = example.data_source;
    inputs[row].prompt = example.prompt.content;
    inputs[row].response = responses[row];
    inputs[row].ground_truth = example.ground_truth;
    json extra_info = json::parse(example.extra_info);
    for (const auto& [key, value] : added[row].items()) extra_info[key] = value;
    inputs[row].extra_info = extra_info.dump();
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
