#include "controller/metrics_logger.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "controller/jsonl_sink.h"
#include "controller/tensorboard_sink.h"

namespace rollout::controller {
namespace {

constexpr char kConsole[] = "console";
constexpr char kJsonl[] = "jsonl";
constexpr char kTensorboard[] = "tensorboard";
const std::vector<std::string>& SupportedLoggers() {
  static const std::vector<std::string> kSupported = {kConsole, kJsonl, kTensorboard};
  return kSupported;
}

absl::Status CheckLoggers(const MetricsLoggerOptions& options) {
  std::set<std::string> seen;
  for (const std::string& name : options.loggers) {
    const std::vector<std::string>& supported = SupportedLoggers();
    if (std::find(supported.begin(), supported.end(), name) == supported.end()) {
      // verl's example scripts log to wandb; its importer reads our TensorBoard files.
      const std::string wandb_hint =
          name != "wandb" ? ""
                          : absl::StrCat(" (for wandb: add tensorboard to trainer.logger, then "
                                         "`wandb sync --sync-tensorboard ",
                                         options.tensorboard_dir.empty() ? "<tensorboard dir>"
                                                                         : options.tensorboard_dir,
                                         "`)");
      return absl::InvalidArgumentError(absl::StrCat("unknown trainer.logger '", name,
                                                     "'; supported: ", absl::StrJoin(supported, ", "),
                                                     wandb_hint));
    }
    if (!seen.insert(name).second) {
      return absl::InvalidArgumentError(absl::StrCat("trainer.logger lists '", name, "' twice"));
    }
    if (name == kConsole && options.console == nullptr) {
      return absl::InvalidArgumentError("trainer.logger 'console' needs a console stream");
    }
    if (name == kJsonl && options.jsonl_path.empty()) {
      return absl::InvalidArgumentError("trainer.logger 'jsonl' needs a file path");
    }
    if (name == kTensorboard && options.tensorboard_dir.empty()) {
      return absl::InvalidArgumentError("trainer.logger 'tensorboard' needs a log directory");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<MetricSink>> MakeSink(const std::string& name,
                                                     const MetricsLoggerOptions& options) {
  if (name == kConsole) {
    return std::make_unique<ConsoleSink>(options.console, options.console_options);
  }
  if (name == kJsonl) return JsonlSink::Open(options.jsonl_path);
  return TensorboardSink::Create(options.tensorboard_dir);
}

}  // namespace

MetricsLoggerOptions MetricsLoggerOptionsFor(const config::TrainerConfig& trainer) {
  MetricsLoggerOptions options;
  options.loggers.assign(trainer.logger().begin(), trainer.logger().end());
  const std::string experiment = JoinPath(trainer.project_name(), trainer.experiment_name());
  options.tensorboard_dir = JoinPath("tensorboard_log", experiment);
  options.jsonl_path = JoinPath(JoinPath("jsonl_log", experiment), "metrics.jsonl");
  return options;
}

absl::StatusOr<std::unique_ptr<MetricsLogger>> MetricsLogger::Create(
    const MetricsLoggerOptions& options) {
  RETURN_IF_ERROR(CheckLoggers(options));
  std::vector<NamedSink> sinks;
  for (const std::string& name : options.loggers) {
    ASSIGN_OR_RETURN(
        std::unique_ptr<MetricSink> sink,
        WithContext(MakeSink(name, options), absl::StrCat("trainer.logger '", name, "'")));
    sinks.emplace_back(name, std::move(sink));
  }
  const bool console_on =
      std::find(options.loggers.begin(), options.loggers.end(), kConsole) != options.loggers.end();
  return std::unique_ptr<MetricsLogger>(
      new MetricsLogger(std::move(sinks), console_on ? options.console : nullptr));
}

MetricsLogger::~MetricsLogger() { Close().IgnoreError(); }

absl::Status MetricsLogger::Log(int64_t step, const StepMetrics& metrics) {
  if (closed_) {
    return absl::FailedPreconditionError(absl::StrCat("logging step ", step, " after Close()"));
  }
  summary_.Record(step, metrics);
  logged_ = true;
  absl::Status first_failure;
  for (const auto& [name, sink] : sinks_) {
    const absl::Status status = sink->Log(step, metrics);
    if (first_failure.ok()) {
      first_failure = WithContext(status, absl::StrCat("trainer.logger '", name, "'"));
    }
  }
  return first_failure;
}

absl::Status MetricsLogger::LogGenerations(int64_t step, const std::vector<GenerationSample>& samples) {
  if (closed_) {
    return absl::FailedPreconditionError(absl::StrCat("logging the generations of step ", step, " after Close()"));
  }
  if (samples.empty()) return absl::OkStatus();
  absl::Status first_failure;
  for (const auto& [name, sink] : sinks_) {
    const absl::Status status = sink->LogGenerations(step, samples);
    if (first_failure.ok()) {
      first_failure = WithContext(status, absl::StrCat("trainer.logger '", name, "'"));
    }
  }
  return first_failure;
}

absl::Status MetricsLogger::Close() {
  if (closed_) return absl::OkStatus();
  closed_ = true;
  absl::Status first_failure;
  for (const auto& [name, sink] : sinks_) {
    const absl::Status status = sink->Close();
    if (first_failure.ok()) {
      first_failure = WithContext(status, absl::StrCat("trainer.logger '", name, "'"));
    }
  }
  if (summary_out_ != nullptr && logged_) {
    *summary_out_ << "\n" << summary_.Render();
    summary_out_->flush();
  }
  return first_failure;
}

}  // namespace rollout::controller
