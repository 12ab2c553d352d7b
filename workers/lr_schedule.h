// The learning-rate schedules of verl's actor and critic (`optim.warmup_style`):
// constant with linear warmup (HF's get_constant_schedule_with_warmup) and cosine with
// warmup and a floor (verl's get_cosine_schedule_with_warmup). Stepped once per
// update call, as verl steps its LambdaLR; step 0 is the first update, so with warmup
// the first update runs at lr 0 (constant) or lr * min_lr_ratio (cosine), as in verl.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace rollout::workers {

struct LrScheduleOptions {
  double lr = 1e-6;
  std::string warmup_style = "constant";  // constant | cosine
  // Warmup steps; -1: lr_warmup_steps_ratio x total_training_steps (rounded down).
  int64_t lr_warmup_steps = -1;
  double lr_warmup_steps_ratio = 0;
  int64_t total_training_steps = 0;
  double min_lr_ratio = 0;  // cosine's floor, as a fraction of lr
  double num_cycles = 0.5;  // cosine waves over the run; 0.5: one half-cosine down
};

class LrSchedule {
 public:
  // InvalidArgument for an unknown warmup_style, a negative total, or ratios outside
  // [0, 1].
  static absl::StatusOr<LrSchedule> Create(const LrScheduleOptions& options);

  // The learning rate of update number `step` (0-based).
  double LrAt(int64_t step) const;
  int64_t warmup_steps() const { return warmup_steps_; }

 private:
  explicit LrSchedule(const LrScheduleOptions& options, int64_t warmup_steps)
      : options_(options), warmup_steps_(warmup_steps) {}

  LrScheduleOptions options_;
  int64_t warmup_steps_;
};

}  // namespace rollout::workers
