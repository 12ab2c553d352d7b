// The learning-rate schedules of verl's actor and critic. Its FSDP optimizer config
// (`optim.warmup_style`): constant with linear warmup (HF's
// get_constant_schedule_with_warmup) and cosine with warmup and a floor (verl's
// get_cosine_schedule_with_warmup). Its Megatron optimizer config (`optim.lr_decay_style`
// and the keys beside it): Megatron's OptimizerParamScheduler as verl builds it. Stepped
// once per update call, as verl steps its LambdaLR and Megatron's scheduler; step 0 is
// the first update, so with warmup the first update runs at lr 0 (constant),
// lr * min_lr_ratio (cosine) or lr_warmup_init (Megatron), as in verl.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace rollout::workers {

// Megatron's schedule: linear warmup from lr_warmup_init to lr, then lr_decay_style's
// decay to min_lr until lr_decay_steps, min_lr after.
struct MegatronLrOptions {
  std::string lr_decay_style = "constant";  // constant | linear | cosine | inverse-square-root | WSD
  double lr_warmup_init = 0;
  double min_lr = 0;
  int64_t lr_decay_steps = 0;  // 0: total_training_steps, as verl fills it in
  // WSD (warmup, stable, decay): lr until the last lr_wsd_decay_steps (> 0) decay steps,
  // which fall to min_lr as this style says.
  std::string lr_wsd_decay_style = "exponential";  // linear | cosine | exponential | minus_sqrt
  int64_t lr_wsd_decay_steps = 0;
};

struct LrScheduleOptions {
  double lr = 1e-6;
  std::string warmup_style = "constant";  // constant | cosine
  // Warmup steps. FSDP's: -1 for lr_warmup_steps_ratio x total_training_steps; Megatron's:
  // <= 0 for lr_warmup_steps_ratio x its decay steps (both rounded down).
  int64_t lr_warmup_steps = -1;
  double lr_warmup_steps_ratio = 0;
  int64_t total_training_steps = 0;
  double min_lr_ratio = 0;  // cosine's floor, as a fraction of lr
  double num_cycles = 0.5;  // cosine waves over the run; 0.5: one half-cosine down
  // Set: Megatron's schedule, in place of warmup_style, min_lr_ratio and num_cycles.
  std::optional<MegatronLrOptions> megatron;
};

class LrSchedule {
 public:
  // InvalidArgument naming the key for an unknown style, a negative total, ratios
  // outside [0, 1], and what Megatron's scheduler refuses: no decay steps, warmup not
  // shorter than them, min_lr or lr_warmup_init above lr, WSD without its decay steps.
  static absl::StatusOr<LrSchedule> Create(const LrScheduleOptions& options);

  // The learning rate of update number `step` (0-based).
  double LrAt(int64_t step) const;
  int64_t warmup_steps() const { return warmup_steps_; }

 private:
  LrSchedule(const LrScheduleOptions& options, int64_t warmup_steps, int64_t decay_steps)
      : options_(options), warmup_steps_(warmup_steps), decay_steps_(decay_steps) {}

  double FsdpLrAt(int64_t step) const;
  double MegatronLrAt(int64_t step) const;

  LrScheduleOptions options_;
  int64_t warmup_steps_;
  int64_t decay_steps_;  // Megatron's lr_decay_steps once resolved
};

}  // namespace rollout::workers
