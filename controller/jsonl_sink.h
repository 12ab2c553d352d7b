// `trainer.logger: [jsonl]`: one JSON object per step, one per line,
//   {"step": 12, "actor/pg_loss": -0.013, "critic/score/mean": 0.41, ...}
// with "step" first and the metrics in name order. NaN and infinite values are
// written as null (JSON has no such numbers). The file is appended to, so a resumed
// run continues the same file; readers keep the last line for a repeated step.
// Each line is flushed to the OS as it is written. Not thread-safe.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "controller/metric_sink.h"

namespace rollout::controller {

class JsonlSink final : public MetricSink {
 public:
  // Opens `path` for appending, creating it and its missing parent directories.
  // Errors name the path.
  static absl::StatusOr<std::unique_ptr<JsonlSink>> Open(const std::string& path);
  ~JsonlSink() override;  // Close(), error dropped
  JsonlSink(const JsonlSink&) = delete;
  JsonlSink& operator=(const JsonlSink&) = delete;

  absl::Status Log(int64_t step, const StepMetrics& metrics) override;
  // The file holds numbers only (trainer.validation_data_dir writes generations): no-op.
  absl::Status LogGenerations(int64_t step, const std::vector<GenerationSample>& samples) override;
  absl::Status Close() override;

  const std::string& path() const { return path_; }

 private:
  JsonlSink(std::string path, std::FILE* file);

  const std::string path_;
  std::FILE* file_;  // null once closed
};

// The line JsonlSink writes for one step, without the newline.
std::string FormatJsonlLine(int64_t step, const StepMetrics& metrics);

}  // namespace rollout::controller
