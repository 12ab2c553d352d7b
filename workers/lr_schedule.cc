#include "workers/lr_schedule.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace rollout::workers {

absl::StatusOr<LrSchedule> LrSchedule::Create(const LrScheduleOptions& options) {
  if (options.warmup_style != "constant" && options.warmup_style != "cosine") {
    return absl::InvalidArgumentError(absl::StrCat("unknown optim.warmup_style '", options.warmup_style,
                                                   "'; expected constant or cosine"));
  }
  if (options.total_training_steps < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("total_training_steps is ", options.total_training_steps, "; expected >= 0"));
  }
  for (const auto& [name, value] : {std::pair<const char*, double>{"lr_warmup_steps_ratio", options.lr_warmup_steps_ratio},
                                    {"min_lr_ratio", options.min_lr_ratio}}) {
    if (!(value >= 0 && value <= 1)) {
      return absl::InvalidArgumentError(absl::StrCat("optim.", name, " is ", value, "; expected [0, 1]"));
    }
  }
  const int64_t warmup = options.lr_warmup_steps >= 0
                             ? options.lr_warmup_steps
                             : static_cast<int64_t>(options.lr_warmup_steps_ratio *
                                                    static_cast<double>(options.total_training_steps));
  return LrSchedule(options, warmup);
}

double LrSchedule::LrAt(int64_t step) const {
  const double warmup_fraction =
      static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmup_steps_));
  double factor = 1;
  if (options_.warmup_style == "constant") {
    factor = step < warmup_steps_ ? warmup_fraction : 1.0;
  } else {
    const double floor = options_.min_lr_ratio;
    if (step < warmup_steps_) {
      factor = floor + (1 - floor) * warmup_fraction;
    } else {
      const double progress =
          static_cast<double>(step - warmup_steps_) /
          static_cast<double>(std::max<int64_t>(1, options_.total_training_steps - warmup_steps_));
      const double wave = std::cos(M_PI * options_.num_cycles * 2.0 * progress);
      factor = std::max(floor, wave * (1 - floor) * 0.5 + (1 + floor) * 0.5);
    }
  }
  return options_.lr * factor;
}

}  // namespace rollout::workers
