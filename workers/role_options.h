// What the training roles (actor, critic) read alike from their recipe sections: the
// model dtype (actor.model.dtype, critic.model.dtype) and the optimizer with its LR
// schedule (actor.optim.*, critic.optim.*).
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>

#include "proto/recipe.pb.h"
#include "workers/adamw.h"
#include "workers/lr_schedule.h"

namespace rollout::workers {

// bfloat16 for "bfloat16", else float32 (the schema allows only these two).
c10::ScalarType DtypeOf(const std::string& name);

AdamWOptions AdamWFrom(const config::OptimConfig& optim);

// `total_training_steps` is the horizon when optim.total_training_steps is -1 (the
// controller knows it from the data).
LrScheduleOptions ScheduleFrom(const config::OptimConfig& optim, int64_t total_training_steps);

}  // namespace rollout::workers
