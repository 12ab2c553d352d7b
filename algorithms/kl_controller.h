// The KL coefficient controllers of `algorithm.kl_ctrl` (verl's FixedKLController and
// AdaptiveKLController), created by name from KlControlOptions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::algorithms {

// `algorithm.kl_ctrl` (KlControlConfig in proto/recipe.proto): same keys and defaults.
struct KlControlOptions {
  std::string type = "fixed";  // fixed | adaptive
  double kl_coef = 0.001;      // the fixed value, or the adaptive controller's initial one
  double horizon = 10000;      // adaptive: steps over which the error is corrected
  double target_kl = 0.1;      // adaptive: the KL the coefficient steers towards

  KlControlOptions& set_type(std::string v) {
    type = std::move(v);
    return *this;
  }
  KlControlOptions& set_kl_coef(double v) {
    kl_coef = v;
    return *this;
  }
  KlControlOptions& set_horizon(double v) {
    horizon = v;
    return *this;
  }
  KlControlOptions& set_target_kl(double v) {
    target_kl = v;
    return *this;
  }
};

// The KL coefficient beta, kept across steps. verl's FixedKLController (value never
// changes) and AdaptiveKLController (Ziegler et al. 2019, arXiv:1909.08593):
//   proportional_error = clip(current_kl / target_kl - 1, -0.2, 0.2)
//   value *= 1 + proportional_error * n_steps / horizon
// Checkpointing saves value() and calls RestoreValue() on resume; the rest comes from
// the recipe. Not thread-safe.
class KlController {
 public:
  virtual ~KlController() = default;

  // "fixed" or "adaptive".
  virtual absl::string_view type() const = 0;

  // The current coefficient.
  double value() const { return value_; }

  // One training step saw `current_kl` over `n_steps` samples (verl passes the batch
  // size). current_kl may be negative (k1 estimates can be). InvalidArgument, leaving
  // the value unchanged, for a non-finite current_kl, a negative n_steps, or (adaptive)
  // a step that would make the coefficient zero or negative, which happens only when
  // n_steps / horizon >= 5.
  virtual absl::Status Update(double current_kl, int64_t n_steps) = 0;

  // Sets the coefficient saved in a checkpoint. InvalidArgument when negative or not
  // finite.
  absl::Status RestoreValue(double value);

 protected:
  explicit KlController(double value) : value_(value) {}
  double value_;
};

// The controller named by options.type. InvalidArgument for an unknown type (listing
// fixed|adaptive), a negative or non-finite kl_coef, or (adaptive) a horizon or
// target_kl that is not positive and finite.
absl::StatusOr<std::unique_ptr<KlController>> MakeKlController(const KlControlOptions& options);

}  // namespace rollout::algorithms
