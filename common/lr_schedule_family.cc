#include "common/lr_schedule_family.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace rollout::config {
namespace {

// The first of Megatron's schedule keys `optim` sets, or nullopt.
std::optional<std::string> FirstMegatronKey(const OptimConfig& optim) {
  const std::vector<std::pair<const char*, bool>> keys = {
      {"lr_decay_style", optim.has_lr_decay_style()},         {"lr_warmup_init", optim.has_lr_warmup_init()},
      {"min_lr", optim.has_min_lr()},                         {"lr_decay_steps", optim.has_lr_decay_steps()},
      {"lr_wsd_decay_style", optim.has_lr_wsd_decay_style()}, {"lr_wsd_decay_steps", optim.has_lr_wsd_decay_steps()},
  };
  for (const auto& [key, set] : keys) {
    if (set) return key;
  }
  return std::nullopt;
}

// The first FSDP schedule key `optim` moves off its default, or nullopt.
std::optional<std::string> FirstFsdpKeyInUse(const OptimConfig& optim) {
  const OptimConfig defaults;
  if (optim.warmup_style() != defaults.warmup_style()) return "warmup_style";
  if (optim.min_lr_ratio() != defaults.min_lr_ratio()) return "min_lr_ratio";
  if (optim.num_cycles() != defaults.num_cycles()) return "num_cycles";
  return std::nullopt;
}

std::string Written(const std::map<std::string, std::string>& sources, const std::string& key) {
  const auto it = sources.find(key);
  return it == sources.end() ? "" : absl::StrCat(" at ", it->second);
}

}  // namespace

bool UsesMegatronSchedule(const OptimConfig& optim) { return FirstMegatronKey(optim).has_value(); }

absl::Status CheckOneLrScheduleFamily(const Recipe& recipe, const std::map<std::string, std::string>& sources) {
  const std::pair<std::string, const OptimConfig*> configs[] = {{"actor.optim", &recipe.actor().optim()},
                                                                 {"critic.optim", &recipe.critic().optim()}};
  for (const auto& [prefix, optim] : configs) {
    const std::optional<std::string> megatron = FirstMegatronKey(*optim);
    const std::optional<std::string> fsdp = FirstFsdpKeyInUse(*optim);
    if (!megatron || !fsdp) continue;
    const std::string megatron_key = absl::StrCat(prefix, ".", *megatron);
    const std::string fsdp_key = absl::StrCat(prefix, ".", *fsdp);
    return absl::InvalidArgumentError(absl::StrCat(
        "'", megatron_key, "'", Written(sources, megatron_key), " asks for Megatron's learning-rate schedule and '",
        fsdp_key, "'", Written(sources, fsdp_key), " sets FSDP's; verl's optimizer configs have one or the other: "
        "write lr_decay_style (with min_lr, lr_warmup_init, lr_decay_steps) or warmup_style (with min_lr_ratio, "
        "num_cycles)"));
  }
  return absl::OkStatus();
}

}  // namespace rollout::config
