#include "controller/tensorboard_sink.h"

#include <unistd.h>

#include <atomic>
#include <climits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "proto/tensorboard.pb.h"

namespace rollout::controller {
namespace {

std::string Hostname() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

// TensorFlow's DataType DT_STRING.
constexpr int kDataTypeString = 7;

double WallTimeSeconds() { return absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()); }

absl::Status WriteEvent(const tensorboard::Event& event, TfRecordWriter* writer) {
  std::string bytes;
  if (!event.SerializeToString(&bytes)) {
    return absl::InternalError(
        absl::StrCat("serializing event of step ", event.step(), " for ", writer->path()));
  }
  return writer->Write(bytes);
}

}  // namespace

std::string EventsFileName(int64_t unix_seconds, absl::string_view hostname, int64_t pid,
                           int64_t counter) {
  return absl::StrCat("events.out.tfevents.", unix_seconds, ".", hostname, ".", pid, ".", counter);
}

absl::StatusOr<std::unique_ptr<TensorboardSink>> TensorboardSink::Create(
    const std::string& log_dir) {
  RETURN_IF_ERROR(
      WithContext(MakeDirectories(log_dir), "creating TensorBoard log directory " + log_dir));
  // Two sinks of one process in one second differ by the counter.
  static std::atomic<int64_t> files_created{0};
  const std::string path = JoinPath(log_dir, EventsFileName(absl::ToUnixSeconds(absl::Now()),
                                                            Hostname(), getpid(), files_created++));
  ASSIGN_OR_RETURN(std::unique_ptr<TfRecordWriter> writer, TfRecordWriter::Create(path));

  tensorboard::Event header;
  header.set_wall_time(WallTimeSeconds());
  header.set_file_version(std::string(kEventsFileVersion));
  RETURN_IF_ERROR(WriteEvent(header, writer.get()));
  return std::unique_ptr<TensorboardSink>(new TensorboardSink(std::move(writer)));
}

absl::Status TensorboardSink::Log(int64_t step, const StepMetrics& metrics) {
  tensorboard::Event event;
  event.set_wall_time(WallTimeSeconds());
  event.set_step(step);
  tensorboard::Summary* summary = event.mutable_summary();
  for (const auto& [name, value] : metrics) {
    tensorboard::Summary::Value* scalar = summary->add_value();
    scalar->set_tag(name);
    scalar->set_simple_value(static_cast<float>(value));
  }
  return WriteEvent(event, writer_.get());
}

absl::Status TensorboardSink::LogGenerations(int64_t step, const std::vector<GenerationSample>& samples) {
  std::string markdown = absl::StrCat("**Generation Results - Step ", step, "**\n\n");
  for (size_t i = 0; i < samples.size(); ++i) {
    absl::StrAppend(&markdown, "### Sample ", i + 1, "\n", "**Input:** ", samples[i].input, "\n\n",
                    "**Output:** ", samples[i].output, "\n\n", "**Score:** ", samples[i].score, "\n\n");
  }
  tensorboard::Event event;
  event.set_wall_time(WallTimeSeconds());
  event.set_step(step);
  tensorboard::Summary::Value* text = event.mutable_summary()->add_value();
  text->set_tag("val/generations");
  text->mutable_metadata()->mutable_plugin_data()->set_plugin_name("text");
  text->mutable_tensor()->set_dtype(kDataTypeString);
  text->mutable_tensor()->mutable_tensor_shape();  // a scalar: no dims
  text->mutable_tensor()->add_string_val(markdown);
  return WriteEvent(event, writer_.get());
}

absl::Status TensorboardSink::Close() { return writer_->Close(); }

}  // namespace rollout::controller
