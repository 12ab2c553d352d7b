// MetricsLogger: verl's `Tracking` — one object the trainer hands each step's
// metrics to, which fans them out to the sinks that `trainer.logger` names:
//   console      progress bar / one line per step (controller/console_sink.h)
//   jsonl        one JSON object per step (controller/jsonl_sink.h)
//   tensorboard  an events file (controller/tensorboard_sink.h)
// It also keeps a RunSummary; Close() prints it (table and reward curve) on the
// console when the console logger is on. Libraries read no environment: where the
// files go comes from the options (the CLI may apply TENSORBOARD_DIR there).
// Not thread-safe: the trainer loop drives it.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/console_sink.h"
#include "controller/metric_sink.h"
#include "controller/run_summary.h"
#include "proto/recipe.pb.h"

namespace rollout::controller {

struct MetricsLoggerOptions {
  // `trainer.logger`; empty logs nowhere (the summary is still kept).
  std::vector<std::string> loggers = {"console"};
  // For "console": the stream (must outlive the logger) and how to draw on it.
  std::ostream* console = nullptr;
  ConsoleSinkOptions console_options;
  // For "tensorboard": the directory of the events file.
  std::string tensorboard_dir;
  // For "jsonl": the file, appended to.
  std::string jsonl_path;
};

// Options from the recipe: its loggers, and verl's places for the files, relative to
// the working directory:
//   tensorboard_dir = tensorboard_log/<project_name>/<experiment_name>
//   jsonl_path      = jsonl_log/<project_name>/<experiment_name>/metrics.jsonl
// The caller adds the console stream and progress options.
MetricsLoggerOptions MetricsLoggerOptionsFor(const config::TrainerConfig& trainer);

class MetricsLogger {
 public:
  // Checks every logger name before creating any file: InvalidArgument for an unknown
  // or repeated one ("unknown trainer.logger 'wandb'; supported: console, jsonl,
  // tensorboard") or one whose option above is missing; file errors name the file.
  static absl::StatusOr<std::unique_ptr<MetricsLogger>> Create(const MetricsLoggerOptions& options);
  ~MetricsLogger();  // Close(), error dropped
  MetricsLogger(const MetricsLogger&) = delete;
  MetricsLogger& operator=(const MetricsLogger&) = delete;

  // Hands the step to every sink, even after one of them fails, and returns the first
  // failure prefixed with the logger's name. FailedPrecondition after Close().
  absl::Status Log(int64_t step, const StepMetrics& metrics);
  // The same for a validation's generations (MetricSink::LogGenerations); nothing when
  // `samples` is empty.
  absl::Status LogGenerations(int64_t step, const std::vector<GenerationSample>& samples);

  // Closes every sink, then prints the summary on the console (when that logger is on
  // and a step was logged). Returns the first failure. Idempotent.
  absl::Status Close();

  const RunSummary& summary() const { return summary_; }

 private:
  using NamedSink = std::pair<std::string, std::unique_ptr<MetricSink>>;
  MetricsLogger(std::vector<NamedSink> sinks, std::ostream* summary_out)
      : sinks_(std::move(sinks)), summary_out_(summary_out) {}

  std::vector<NamedSink> sinks_;     // in `trainer.logger` order
  std::ostream* const summary_out_;  // the console, or null
  RunSummary summary_;
  bool logged_ = false;
  bool closed_ = false;
};

}  // namespace rollout::controller
