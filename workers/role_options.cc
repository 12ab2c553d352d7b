#include "workers/role_options.h"

#include "common/check.h"
#include "common/lr_schedule_family.h"

namespace rollout::workers {

c10::ScalarType DtypeOf(const std::string& name) {
  return name == "bfloat16" ? c10::kBFloat16 : c10::kFloat;
}

AdamWOptions AdamWFrom(const config::OptimConfig& optim) {
  AdamWOptions adamw;
  adamw.lr = optim.lr();
  // A loaded recipe has two (the loader fills the default and checks the size); a
  // recipe built in code may leave them out for AdamWOptions' defaults.
  ROLLOUT_CHECK(optim.betas_size() == 0 || optim.betas_size() == 2)
      << "optim.betas must hold [beta1, beta2], got " << optim.betas_size() << " values";
  if (optim.betas_size() == 2) {
    adamw.beta1 = optim.betas(0);
    adamw.beta2 = optim.betas(1);
  }
  adamw.eps = optim.eps();
  adamw.weight_decay = optim.weight_decay();
  // torch's Adam; AdamW, and Megatron's adam, decouple the decay.
  adamw.decoupled_weight_decay = optim.optimizer() != "Adam";
  return adamw;
}

bool TrainsLora(const config::ModelConfig& model) {
  return model.lora_rank() > 0 || !model.lora_adapter_path().empty();
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
  if (config::UsesMegatronSchedule(optim)) {
    MegatronLrOptions& megatron = schedule.megatron.emplace();
    if (optim.has_lr_decay_style()) megatron.lr_decay_style = optim.lr_decay_style();
    megatron.lr_warmup_init = optim.lr_warmup_init();
    megatron.min_lr = optim.min_lr();
    if (optim.has_lr_decay_steps()) megatron.lr_decay_steps = optim.lr_decay_steps();
    if (optim.has_lr_wsd_decay_style()) megatron.lr_wsd_decay_style = optim.lr_wsd_decay_style();
    if (optim.has_lr_wsd_decay_steps()) megatron.lr_wsd_decay_steps = optim.lr_wsd_decay_steps();
  }
  return schedule;
}

MicroBatchSize MicroBatchSizeOf(const config::PassBatching& pass) {
  return MicroBatchSize(pass.rows, pass.max_tokens);
}

}  // namespace rollout::workers
