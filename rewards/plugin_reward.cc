#include "rewards/plugin_reward.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/shared_library.h"
#include "rewards/plugin_api.h"

namespace rollout::rewards {
namespace {

using AbiVersionFn = int (*)();
using NameFn = const char* (*)();
using ScoreFn = int (*)(const RolloutRewardInput*, double*, RolloutRewardAddExtra, void*, char*,
                        size_t);

class PluginReward final : public RewardFunction {
 public:
  PluginReward(SharedLibrary library, std::string name, ScoreFn score)
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

  SharedLibrary library_;
  std::string name_;
  ScoreFn score_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<RewardFunction>> LoadRewardPlugin(const std::string& path) {
  SharedLibrary library(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (library == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("cannot load reward plug-in ", path, ": ", dlerror()));
  }
  auto symbol = [&](const char* name) { return dlsym(library.get(), name); };
  const auto abi_version = reinterpret_cast<AbiVersionFn>(symbol("rollout_reward_abi_version"));
  const auto reward_name = reinterpret_cast<NameFn>(symbol("rollout_reward_name"));
  const auto score = reinterpret_cast<ScoreFn>(symbol("rollout_reward_score"));
  for (const auto& [found, name] : {std::pair<bool, const char*>{abi_version != nullptr,
                                                                 "rollout_reward_abi_version"},
                                    {reward_name != nullptr, "rollout_reward_name"},
                                    {score != nullptr, "rollout_reward_score"}}) {
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat(
          "reward plug-in ", path, " does not export ", name, " (see rewards/plugin_api.h)"));
    }
  }
  if (const int version = abi_version(); version != ROLLOUT_REWARD_ABI_VERSION) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reward plug-in ", path, " was built for reward ABI version ", version,
        "; this rollout supports version ", ROLLOUT_REWARD_ABI_VERSION, " — rebuild it against ",
        "this rollout's rewards/plugin_api.h"));
  }
  const char* name = reward_name();
  return std::make_unique<PluginReward>(std::move(library), name != nullptr ? name : path, score);
}

}  // namespace rollout::rewards
