#include "controller/jsonl_sink.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace rollout::controller {
namespace {

absl::Status IoError(absl::string_view action, const std::string& path, int error) {
  return absl::UnavailableError(absl::StrCat(action, " ", path, ": ", std::strerror(error)));
}

}  // namespace

std::string FormatJsonlLine(int64_t step, const StepMetrics& metrics) {
  nlohmann::ordered_json line;  // keeps "step" first
  line["step"] = step;
  for (const auto& [name, value] : metrics) {
    if (std::isfinite(value)) {
      line[name] = value;
    } else {
      line[name] = nullptr;
    }
  }
  return line.dump();
}

absl::StatusOr<std::unique_ptr<JsonlSink>> JsonlSink::Open(const std::string& path) {
  RETURN_IF_ERROR(WithContext(MakeDirectories(Dirname(path)), "opening metrics file " + path));
  // "a": a resumed run continues the file; "e": close-on-exec for launched workers.
  std::FILE* file = std::fopen(path.c_str(), "ae");
  if (file == nullptr) return IoError("opening metrics file", path, errno);
  return std::unique_ptr<JsonlSink>(new JsonlSink(path, file));
}

JsonlSink::JsonlSink(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}

JsonlSink::~JsonlSink() { Close().IgnoreError(); }

absl::Status JsonlSink::Log(int64_t step, const StepMetrics& metrics) {
  if (file_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("writing to metrics file ", path_, " after Close()"));
  }
  const std::string line = FormatJsonlLine(step, metrics) + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    return IoError(absl::StrCat("writing step ", step, " to metrics file"), path_, errno);
  }
  return absl::OkStatus();
}

absl::Status JsonlSink::LogGenerations(int64_t, const std::vector<GenerationSample>&) {
  return absl::OkStatus();
}

absl::Status JsonlSink::Close() {
  if (file_ == nullptr) return absl::OkStatus();
  std::FILE* file = std::exchange(file_, nullptr);
  if (std::fclose(file) != 0) return IoError("closing metrics file", path_, errno);
  return absl::OkStatus();
}

}  // namespace rollout::controller
