// What the training roles (actor, critic) read alike from their recipe sections: the
// model dtype (actor.model.dtype, critic.model.dtype), the optimizer with its LR
// schedule (actor.optim.*, critic.optim.*) and a pass's micro-batches.
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>

#include "common/recipe_batching.h"
#include "proto/recipe.pb.h"
#include "workers/adamw.h"
#include "workers/lr_schedule.h"
#include "workers/micro_batches.h"

namespace rollout::workers {

// bfloat16 for "bfloat16", else float32 (the schema allows only these two).
c10::ScalarType DtypeOf(const std::string& name);

AdamWOptions AdamWFrom(const config::OptimConfig& optim);

// Whether `model` trains LoRA adapters, as verl decides: lora_rank > 0, or a
// lora_adapter_path to start from (whose own rank then applies).
bool TrainsLora(const config::ModelConfig& model);

// `total_training_steps` is the horizon when optim.total_training_steps is -1 (the
// controller knows it from the data). Megatron's schedule when `optim` writes any of its
// keys (common/lr_schedule_family.h), its unset keys at Megatron's defaults.
LrScheduleOptions ScheduleFrom(const config::OptimConfig& optim, int64_t total_training_steps);

// A pass's micro-batches as common/recipe_batching.h resolves them from the recipe.
MicroBatchSize MicroBatchSizeOf(const config::PassBatching& pass);

}  // namespace rollout::workers
