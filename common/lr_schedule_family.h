// Which of verl's two learning-rate schedules an optimizer config (actor.optim,
// critic.optim) follows. verl's FSDP optimizer config schedules with warmup_style
// (lr_scheduler_type), min_lr_ratio and num_cycles; its Megatron optimizer config with
// lr_decay_style, lr_warmup_init, min_lr, lr_decay_steps, lr_wsd_decay_style and
// lr_wsd_decay_steps. Writing any of the Megatron keys picks Megatron's schedule
// (workers/lr_schedule.h); a recipe that also moves an FSDP key off its default mixes
// the two, which the loader refuses.
#pragma once

#include <map>
#include <string>

#include "absl/status/status.h"
#include "proto/recipe.pb.h"

namespace rollout::config {

// Whether `optim` sets any of Megatron's schedule keys.
bool UsesMegatronSchedule(const OptimConfig& optim);

// InvalidArgument naming both keys and where they were written (`sources`:
// LoadedRecipe::sources) when actor.optim or critic.optim sets Megatron's schedule and
// an FSDP schedule key away from its default.
absl::Status CheckOneLrScheduleFamily(const Recipe& recipe, const std::map<std::string, std::string>& sources);

}  // namespace rollout::config
