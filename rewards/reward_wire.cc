#include "rewards/reward_wire.h"

namespace rollout::rewards {

wire::RewardSample ToWire(const RewardInput& input) {
  wire::RewardSample sample;
  sample.set_data_source(input.data_source);
  sample.set_prompt(input.prompt);
  sample.set_response(input.response);
  sample.set_ground_truth(input.ground_truth);
  sample.set_extra_info(input.extra_info);
  return sample;
}

RewardInput FromWire(const wire::RewardSample& sample) {
  RewardInput input;
  input.data_source = sample.data_source();
  input.prompt = sample.prompt();
  input.response = sample.response();
  input.ground_truth = sample.ground_truth();
  input.extra_info = sample.extra_info();
  return input;
}

wire::RewardResult ToWire(const ScoredSample& result) {
  wire::RewardResult message;
  message.set_score(result.output.score);
  for (const auto& [name, value] : result.output.extra) (*message.mutable_extra())[name] = value;
  switch (result.outcome) {
    case SampleOutcome::kOk: message.set_outcome(wire::RewardResult::OK); break;
    case SampleOutcome::kError: message.set_outcome(wire::RewardResult::ERROR); break;
    case SampleOutcome::kTimeout: message.set_outcome(wire::RewardResult::TIMEOUT); break;
  }
  message.set_error(result.error);
  return message;
}

ScoredSample FromWire(const wire::RewardResult& message) {
  ScoredSample result;
  result.output.score = message.score();
  result.output.extra.insert(message.extra().begin(), message.extra().end());
  switch (message.outcome()) {
    case wire::RewardResult::TIMEOUT: result.outcome = SampleOutcome::kTimeout; break;
    case wire::RewardResult::OK: result.outcome = SampleOutcome::kOk; break;
    default: result.outcome = SampleOutcome::kError; break;
  }
  result.error = message.error();
  return result;
}

}  // namespace rollout::rewards
