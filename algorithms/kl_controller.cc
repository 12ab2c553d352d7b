#include "algorithms/kl_controller.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::algorithms {
namespace {

absl::Status CheckUpdateArgs(double current_kl, int64_t n_steps) {
  if (!std::isfinite(current_kl)) {
    return absl::InvalidArgumentError(
        absl::StrCat("KL controller update: current_kl is not finite (", current_kl, ")"));
  }
  if (n_steps < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("KL controller update: n_steps must be >= 0; got ", n_steps));
  }
  return absl::OkStatus();
}

class FixedKlController final : public KlController {
 public:
  explicit FixedKlController(double kl_coef) : KlController(kl_coef) {}
  absl::string_view type() const override { return "fixed"; }
  absl::Status Update(double current_kl, int64_t n_steps) override {
    return CheckUpdateArgs(current_kl, n_steps);
  }
};

class AdaptiveKlController final : public KlController {
 public:
  AdaptiveKlController(double init_kl_coef, double target_kl, double horizon)
      : KlController(init_kl_coef), target_kl_(target_kl), horizon_(horizon) {}
  absl::string_view type() const override { return "adaptive"; }

  absl::Status Update(double current_kl, int64_t n_steps) override {
    RETURN_IF_ERROR(CheckUpdateArgs(current_kl, n_steps));
    const double proportional_error = std::clamp(current_kl / target_kl_ - 1, -0.2, 0.2);
    const double mult = 1 + proportional_error * static_cast<double>(n_steps) / horizon_;
    if (mult <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("adaptive KL controller: n_steps ", n_steps, " over horizon ", horizon_,
                       " gives the multiplier ", mult,
                       ", which would make kl_coef non-positive; raise "
                       "algorithm.kl_ctrl.horizon"));
    }
    value_ *= mult;
    return absl::OkStatus();
  }

 private:
  double target_kl_;
  double horizon_;
};

absl::Status CheckPositive(double value, const char* key) {
  if (std::isfinite(value) && value > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("algorithm.kl_ctrl.", key, " must be positive and finite; got ", value));
}

}  // namespace

absl::Status KlController::RestoreValue(double value) {
  if (!std::isfinite(value) || value < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("KL controller: restored kl_coef must be finite and >= 0; got ", value));
  }
  value_ = value;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<KlController>> MakeKlController(const KlControlOptions& options) {
  if (!std::isfinite(options.kl_coef) || options.kl_coef < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("algorithm.kl_ctrl.kl_coef must be finite and >= 0; got ", options.kl_coef));
  }
  if (options.type == "fixed") return std::make_unique<FixedKlController>(options.kl_coef);
  if (options.type == "adaptive") {
    RETURN_IF_ERROR(CheckPositive(options.horizon, "horizon"));
    RETURN_IF_ERROR(CheckPositive(options.target_kl, "target_kl"));
    return std::make_unique<AdaptiveKlController>(options.kl_coef, options.target_kl,
                                                  options.horizon);
  }
  return absl::InvalidArgumentError(absl::StrCat("algorithm.kl_ctrl.type: unknown controller '",
                                                 options.type, "'; valid: fixed, adaptive"));
}

}  // namespace rollout::algorithms
