#include "rewards/reward_runner_factory.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "rewards/process_reward_runner.h"
#include "rewards/remote_reward_runner.h"
#include "rewards/thread_reward_runner.h"

namespace rollout::rewards {

absl::StatusOr<std::unique_ptr<RewardRunner>> CreateRewardRunner(
    const config::RewardConfig& config, const std::string& rollout_binary) {
  RewardSpec spec;
  spec.name = config.name();
  spec.plugin = config.plugin();
  const absl::Duration timeout = absl::Seconds(config.timeout_s());
  if (!config.remote().empty()) {
    if (!spec.name.empty() || !spec.plugin.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "reward.remote (", config.remote(), ") scores with the server's reward function; "
          "drop reward.name / reward.plugin and give them to `rollout reward-server`"));
    }
    RemoteRunnerOptions options;
    options.address = config.remote();
    options.deadline = absl::Seconds(config.remote_deadline_s());
    options.max_attempts = config.remote_max_attempts();
    ASSIGN_OR_RETURN(std::unique_ptr<RemoteRewardRunner> runner, RemoteRewardRunner::Create(options));
    return std::unique_ptr<RewardRunner>(std::move(runner));
  }
  if (config.isolation() == "process") {
    ProcessRunnerOptions options;
    options.spec = spec;
    options.rollout_binary = rollout_binary;
    options.num_workers = config.num_workers();
    options.timeout = timeout;
    options.memory_limit_mb = config.memory_limit_mb();
    ASSIGN_OR_RETURN(std::unique_ptr<ProcessRewardRunner> runner, ProcessRewardRunner::Create(options));
    return std::unique_ptr<RewardRunner>(std::move(runner));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const RewardSelector> selector, RewardSelector::Create(spec));
  ThreadRunnerOptions options;
  options.num_workers = config.num_workers();
  options.timeout = timeout;
  return std::unique_ptr<RewardRunner>(std::make_unique<ThreadRewardRunner>(std::move(selector), options));
}

}  // namespace rollout::rewards
