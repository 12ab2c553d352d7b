#include "workers/role_options.h"

namespace rollout::workers {

c10::ScalarType DtypeOf(const std::string& name) {
  return name == "bfloat16" ? c10::kBFloat16 : c10::kFloat;
}

AdamWOptions AdamWFrom(const config::OptimConfig& optim) {
  AdamWOptions adamw;
  adamw.lr = optim.lr();
  adamw.beta1 = optim.beta1();
  adamw.beta2 = optim.beta2();
  adamw.eps = optim.eps();
  adamw.weight_decay = optim.weight_decay();
  return adamw;
}

LrScheduleOptions ScheduleFrom(const config::OptimConfig& optim, int64_t total_training_steps) {
  LrScheduleOptions schedule;
  schedule.lr = optim.lr();
  schedule.warmup_style = optim.warmup_style();
  schedule.lr_warmup_steps = optim.lr_warmup_steps();
  schedule.lr_warmup_steps_ratio = optim.lr_warmup_steps_ratio();
  schedule.total_training_steps =
      optim.total_training_steps() > 0 ? optim.total_training_steps() : total_training_steps;
  schedule.min_lr_ratio = optim.min_lr_ratio();
  schedule.num_cycles = optim.num_cycles();
  return schedule;
}

MicroBatchSize MicroBatchSizeOf(const config::PassBatching& pass) {
  return MicroBatchSize(pass.rows, pass.max_tokens);
}

}  // namespace rollout::workers
