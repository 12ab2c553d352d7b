// MetricSink: where one training step's metrics go (console, JSON lines, TensorBoard).
//
// Metrics are named as in verl (`actor/pg_loss`, `critic/score/mean`,
// `timing_s/gen`, `val-core/<data_source>/<var>/mean@N`, ...) so dashboards and
// scripts carry over. A sink receives every step's whole map once, in increasing step
// order; it keeps no state a crash could lose beyond the step being written (file
// sinks flush after each step). Sinks are built by MetricsLogger from
// `trainer.logger` (controller/metrics_logger.h).
//
// Not thread-safe: one caller (the trainer loop) drives a sink.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace rollout::controller {

// One step's metrics by name; std::map so every sink sees them in one order.
using StepMetrics = std::map<std::string, double>;

// How the outputs meant for people (console line, summary table) show a value: four
// significant digits, and large values without an exponent ("12346", not "1.235e+04").
inline std::string FormatMetricValue(double value) {
  const double magnitude = value < 0 ? -value : value;
  if (magnitude >= 1e4 && magnitude < 1e12) return absl::StrFormat("%.0f", value);
  return absl::StrFormat("%.4g", value);
}

// One response of a validation, as trainer.log_val_generations shows it.
struct GenerationSample {
  std::string input;   // the prompt as the model saw it
  std::string output;  // the response text
  double score = 0;
};

class MetricSink {
 public:
  virtual ~MetricSink() = default;

  // Writes `metrics` for `step` (the global step, 1-based as in verl). Values may be
  // NaN or infinite; each sink documents how it shows them. Errors name the sink's
  // file. Must not be called after Close().
  virtual absl::Status Log(int64_t step, const StepMetrics& metrics) = 0;

  // trainer.log_val_generations: a few of a validation's responses, shown with `step`
  // (after that step's Log). Each sink documents where they go, or that it keeps
  // numbers only. Must not be called after Close().
  virtual absl::Status LogGenerations(int64_t step, const std::vector<GenerationSample>& samples) = 0;

  // Flushes and releases the sink's file or stream. Idempotent; the destructor
  // closes too but drops the error, so call Close() to see it.
  virtual absl::Status Close() = 0;
};

}  // namespace rollout::controller
