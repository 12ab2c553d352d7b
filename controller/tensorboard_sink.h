// `trainer.logger: [tensorboard]`: scalar curves in a TensorBoard events file, and the
// validation generations trainer.log_val_generations asks for as text.
//
// The file, `<log_dir>/events.out.tfevents.<unix seconds>.<hostname>.<pid>.<n>`
// (TensorBoard loads every file whose name contains "tfevents"; the rest keeps names
// from two writers unique), is a TFRecord file (controller/tfrecord_writer.h) of
// Event protos (proto/tensorboard.proto): first one with file_version
// "brain.Event:2", then one per step whose Summary holds a simple_value per metric,
// tagged with the metric's name. Values are stored as float, as TensorBoard does;
// NaN and infinities are kept (TensorBoard shows them). Each run, resumed or not,
// writes a new file; TensorBoard merges the files of one directory into one run.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "controller/metric_sink.h"
#include "controller/tfrecord_writer.h"

namespace rollout::controller {

inline constexpr absl::string_view kEventsFileVersion = "brain.Event:2";

class TensorboardSink final : public MetricSink {
 public:
  // Creates `log_dir` (and missing parents) and a new events file in it, holding the
  // file_version record. Errors name the directory or file.
  static absl::StatusOr<std::unique_ptr<TensorboardSink>> Create(const std::string& log_dir);

  absl::Status Log(int64_t step, const StepMetrics& metrics) override;
  // One event at `step` with a text value tagged "val/generations" (TensorBoard's Text
  // tab): Markdown with each sample's input, output and score, as verl writes it.
  absl::Status LogGenerations(int64_t step, const std::vector<GenerationSample>& samples) override;
  absl::Status Close() override;

  // The events file being written.
  const std::string& path() const { return writer_->path(); }

 private:
  explicit TensorboardSink(std::unique_ptr<TfRecordWriter> writer) : writer_(std::move(writer)) {}

  std::unique_ptr<TfRecordWriter> writer_;
};

// "events.out.tfevents.<unix_seconds>.<hostname>.<pid>.<counter>".
std::string EventsFileName(int64_t unix_seconds, absl::string_view hostname, int64_t pid,
                           int64_t counter);

}  // namespace rollout::controller
