#include "rewards/plugin_reward.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/plugin_library.h"
#include "common/status_macros.h"
#include "rewards/plugin_api.h"

namespace rollout::rewards {
namespace {

using NameFn = const char* (*)();
using ScoreFn = int (*)(const RolloutRewardInput*, double*, RolloutRewardAddExtra, void*, char*,
                        size_t);

class PluginReward final : public RewardFunction {
 public:
  PluginReward(PluginLibrary library, std::string name, ScoreFn score)
      : library_(std::move(library)), name_(std::move(name)), score_(score) {}

  const std::string& name() const override { return name_; }

  absl::StatusOr<RewardOutput> Score(const RewardInput& input) const override {
    const RolloutRewardInput c_input = {input.data_source.c_str(), input.prompt.c_str(),
                                        input.response.c_str(), input.ground_truth.c_str(),
                                        input.extra_info.c_str()};
    RewardOutput output;
    char error[512] = {0};
    const int rc = score_(&c_input, &output.score, &AddExtra, &output, error, sizeof(error));
    if (rc != 0) {
      error[sizeof(error) - 1] = '\0';
      return absl::InternalError(
          absl::StrCat("reward plug-in '", name_, "' failed (code ", rc, "): ", error));
    }
    return output;
  }

 private:
  static void AddExtra(void* context, const char* name, double value) {
    if (name != nullptr) static_cast<RewardOutput*>(context)->extra[name] = value;
  }

  PluginLibrary library_;
  std::string name_;
  ScoreFn score_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<RewardFunction>> LoadRewardPlugin(const std::string& path) {
  ASSIGN_OR_RETURN(PluginLibrary library,
                   PluginLibrary::Open(path, {"reward", "rewards/plugin_api.h", "rollout_reward_abi_version",
                                              ROLLOUT_REWARD_ABI_VERSION,
                                              {"rollout_reward_name", "rollout_reward_score"}}));
  const char* name = library.Get<NameFn>("rollout_reward_name")();
  const auto score = library.Get<ScoreFn>("rollout_reward_score");
  return std::make_unique<PluginReward>(std::move(library), name != nullptr ? name : path, score);
}

}  // namespace rollout::rewards
