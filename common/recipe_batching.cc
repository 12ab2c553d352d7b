#include "common/recipe_batching.h"

namespace rollout::config {
namespace {

// rollout.* (old_log_prob) or ref.*.
template <typename PassConfig>
PassBatching LogProbBatching(const PassConfig& pass, const std::string& prefix) {
  return {pass.log_prob_micro_batch_size_per_gpu(),
          pass.log_prob_use_dynamic_bsz() ? pass.log_prob_max_token_len_per_gpu() : 0,
          prefix + ".log_prob_max_token_len_per_gpu"};
}

}  // namespace

PassBatching UpdateActorBatching(const Recipe& recipe) {
  const ActorConfig& actor = recipe.actor();
  return {actor.ppo_micro_batch_size_per_gpu(),
          actor.use_dynamic_bsz() ? actor.ppo_max_token_len_per_gpu() : 0,
          "actor.ppo_max_token_len_per_gpu"};
}

PassBatching UpdateCriticBatching(const Recipe& recipe) {
  const CriticConfig& critic = recipe.critic();
  return {critic.ppo_micro_batch_size_per_gpu(),
          critic.use_dynamic_bsz() ? critic.ppo_max_token_len_per_gpu() : 0,
          "critic.ppo_max_token_len_per_gpu"};
}

PassBatching CriticValuesBatching(const Recipe& recipe) {
  const CriticConfig& critic = recipe.critic();
  return {critic.forward_micro_batch_size_per_gpu(),
          critic.use_dynamic_bsz() ? critic.forward_max_token_len_per_gpu() : 0,
          "critic.forward_max_token_len_per_gpu"};
}

PassBatching RewardModelBatching(const Recipe& recipe) {
  const RewardModelConfig& reward_model = recipe.reward_model();
  return {reward_model.micro_batch_size_per_gpu(),
          reward_model.use_dynamic_bsz() ? reward_model.forward_max_token_len_per_gpu() : 0,
          "reward_model.forward_max_token_len_per_gpu"};
}

PassBatching OldLogProbBatching(const Recipe& recipe) {
  return LogProbBatching(recipe.rollout(), "rollout");
}

PassBatching RefLogProbBatching(const Recipe& recipe) { return LogProbBatching(recipe.ref(), "ref"); }

}  // namespace rollout::config
