#include "common/atomic_file_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"

namespace rollout {

absl::StatusOr<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Open(const std::string& path) {
  if (absl::Status made = MakeDirectories(Dirname(path)); !made.ok()) return made;
  std::string temp = absl::StrCat(path, ".tmp.", getpid());
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("creating " + temp, errno);
  return std::unique_ptr<AtomicFileWriter>(new AtomicFileWriter(path, std::move(temp), fd));
}

AtomicFileWriter::AtomicFileWriter(std::string path, std::string temp, int fd)
    : path_(std::move(path)), temp_(std::move(temp)), fd_(fd) {}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) close(fd_);
  if (!committed_) unlink(temp_.c_str());
}

absl::Status AtomicFileWriter::Append(absl::string_view bytes) {
  if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat("writing ", path_, " after Commit()"));
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = write(fd_, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("writing " + temp_, errno);
    written += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status AtomicFileWriter::Commit() {
  if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat("committing ", path_, " twice"));
  const int fd = fd_;
  fd_ = -1;
  if (fsync(fd) != 0) {
    const int error = errno;
    close(fd);
    return ErrnoError("fsync " + temp_, error);
  }
  if (close(fd) != 0) return ErrnoError("closing " + temp_, errno);
  if (rename(temp_.c_str(), path_.c_str()) != 0) return ErrnoError("renaming " + temp_ + " to " + path_, errno);
  committed_ = true;
  return SyncDirectory(Dirname(path_));
}

}  // namespace rollout
