#include "workers/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"

namespace rollout::workers {
namespace {

bool OneOf(const std::string& value, std::initializer_list<const char*> choices) {
  return std::any_of(choices.begin(), choices.end(), [&value](const char* choice) { return value == choice; });
}

// Megatron's checks (its scheduler asserts them), with the decay steps resolved.
absl::Status CheckMegatron(const MegatronLrOptions& megatron, double lr, int64_t warmup, int64_t decay_steps) {
  if (!OneOf(megatron.lr_decay_style, {"constant", "linear", "cosine", "inverse-square-root", "WSD"})) {
    return absl::InvalidArgumentError(absl::StrCat("unknown optim.lr_decay_style '", megatron.lr_decay_style,
                                                   "'; expected constant, linear, cosine, inverse-square-root or WSD"));
  }
  if (!OneOf(megatron.lr_wsd_decay_style, {"linear", "cosine", "exponential", "minus_sqrt"})) {
    return absl::InvalidArgumentError(absl::StrCat("unknown optim.lr_wsd_decay_style '", megatron.lr_wsd_decay_style,
                                                   "'; expected linear, cosine, exponential or minus_sqrt"));
  }
  if (decay_steps <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Megatron's schedule (optim.lr_decay_style) needs decay steps: optim.lr_decay_steps or "
                     "total_training_steps is ",
                     decay_steps, "; expected > 0"));
  }
  if (warmup >= decay_steps) {
    return absl::InvalidArgumentError(absl::StrCat("optim warmup of ", warmup, " steps is not shorter than the ",
                                                   decay_steps, " decay steps (optim.lr_decay_steps)"));
  }
  for (const auto& [name, value] : {std::pair<const char*, double>{"min_lr", megatron.min_lr},
                                    {"lr_warmup_init", megatron.lr_warmup_init}}) {
    if (!(value >= 0 && value <= lr)) {
      return absl::InvalidArgumentError(absl::StrCat("optim.", name, " is ", value, "; expected [0, optim.lr = ", lr,
                                                     "]"));
    }
  }
  if (megatron.lr_decay_style == "WSD" && megatron.lr_wsd_decay_steps <= 0) {
    return absl::InvalidArgumentError("optim.lr_decay_style WSD needs optim.lr_wsd_decay_steps (> 0)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LrSchedule> LrSchedule::Create(const LrScheduleOptions& options) {
  if (options.total_training_steps < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("total_training_steps is ", options.total_training_steps, "; expected >= 0"));
  }
  if (!(options.lr_warmup_steps_ratio >= 0 && options.lr_warmup_steps_ratio <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("optim.lr_warmup_steps_ratio is ", options.lr_warmup_steps_ratio, "; expected [0, 1]"));
  }
  if (options.megatron.has_value()) {
    const int64_t decay_steps =
        options.megatron->lr_decay_steps > 0 ? options.megatron->lr_decay_steps : options.total_training_steps;
    const int64_t warmup = options.lr_warmup_steps > 0
                               ? options.lr_warmup_steps
                               : static_cast<int64_t>(options.lr_warmup_steps_ratio * static_cast<double>(decay_steps));
    if (absl::Status s = CheckMegatron(*options.megatron, options.lr, warmup, decay_steps); !s.ok()) return s;
    return LrSchedule(options, warmup, decay_steps);
  }
  if (options.warmup_style != "constant" && options.warmup_style != "cosine") {
    return absl::InvalidArgumentError(absl::StrCat("unknown optim.warmup_style '", options.warmup_style,
                                                   "'; expected constant or cosine"));
  }
  if (!(options.min_lr_ratio >= 0 && options.min_lr_ratio <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("optim.min_lr_ratio is ", options.min_lr_ratio, "; expected [0, 1]"));
  }
  const int64_t warmup = options.lr_warmup_steps >= 0
                             ? options.lr_warmup_steps
                             : static_cast<int64_t>(options.lr_warmup_steps_ratio *
                                                    static_cast<double>(options.total_training_steps));
  return LrSchedule(options, warmup, options.total_training_steps);
}

double LrSchedule::LrAt(int64_t step) const {
  return options_.megatron.has_value() ? MegatronLrAt(step) : FsdpLrAt(step);
}

double LrSchedule::FsdpLrAt(int64_t step) const {
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

double LrSchedule::MegatronLrAt(int64_t step) const {
  const MegatronLrOptions& megatron = *options_.megatron;
  const double max_lr = options_.lr;
  const double min_lr = megatron.min_lr;
  if (warmup_steps_ > 0 && step <= warmup_steps_) {
    return megatron.lr_warmup_init + (max_lr - megatron.lr_warmup_init) * static_cast<double>(step) /
                                         static_cast<double>(warmup_steps_);
  }
  const std::string& style = megatron.lr_decay_style;
  if (style == "constant") return max_lr;
  if (step > decay_steps_) return min_lr;
  if (style == "inverse-square-root") {
    const double warmup = static_cast<double>(std::max<int64_t>(warmup_steps_, 1));
    return std::max(min_lr, max_lr * std::sqrt(warmup) / std::sqrt(static_cast<double>(std::max<int64_t>(step, 1))));
  }
  const double decay_ratio =
      static_cast<double>(step - warmup_steps_) / static_cast<double>(decay_steps_ - warmup_steps_);
  double coeff = 1;
  if (style == "linear") {
    coeff = 1 - decay_ratio;
  } else if (style == "cosine") {
    coeff = 0.5 * (std::cos(M_PI * decay_ratio) + 1);
  } else {  // WSD: stable, then its own decay over the last lr_wsd_decay_steps
    const int64_t anneal_start = decay_steps_ - megatron.lr_wsd_decay_steps;
    if (step > anneal_start) {
      const double ratio =
          static_cast<double>(step - anneal_start) / static_cast<double>(megatron.lr_wsd_decay_steps);
      const std::string& wsd = megatron.lr_wsd_decay_style;
      if (wsd == "linear") {
        coeff = 1 - ratio;
      } else if (wsd == "cosine") {
        coeff = 0.5 * (std::cos(M_PI * ratio) + 1);
      } else if (wsd == "exponential") {
        coeff = 2 * std::pow(0.5, ratio) - 1;
      } else {  // minus_sqrt
        coeff = 1 - std::sqrt(ratio);
      }
    }
  }
  return min_lr + coeff * (max_lr - min_lr);
}

}  // namespace rollout::workers
