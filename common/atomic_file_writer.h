// A file written crash-safely in pieces, for contents too large to assemble in memory
// first (checkpoint tensors): the bytes go to `<path>.tmp.<pid>` as they come, and
// Commit() fsyncs it, renames it over `path` and fsyncs the directory, so `path` holds
// the old contents or all of the new ones. A writer destroyed before a successful
// Commit() removes its temporary file.
//
// Not thread-safe; one writer per path at a time.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout {

class AtomicFileWriter {
 public:
  // Creates missing parent directories and the temporary file. Errors name the path.
  static absl::StatusOr<std::unique_ptr<AtomicFileWriter>> Open(const std::string& path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  absl::Status Append(absl::string_view bytes);
  // FailedPrecondition when called twice.
  absl::Status Commit();

 private:
  AtomicFileWriter(std::string path, std::string temp, int fd);

  const std::string path_;
  const std::string temp_;
  int fd_;  // -1 once closed
  bool committed_ = false;
};

}  // namespace rollout
