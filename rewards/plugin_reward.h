// Loads a reward plug-in (a shared library with the C ABI of rewards/plugin_api.h) as a
// RewardFunction. The library stays loaded for the lifetime of the returned function.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "rewards/reward_function.h"

namespace rollout::rewards {

// NotFound when the library cannot be opened (with the loader's message);
// InvalidArgument naming the library and the symbol when one of the three functions is
// missing, or both versions when its ABI version differs from this build's.
absl::StatusOr<std::unique_ptr<RewardFunction>> LoadRewardPlugin(const std::string& path);

}  // namespace rollout::rewards
