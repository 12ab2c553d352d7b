#include "common/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace rollout {
namespace {

absl::Status ErrnoError(const std::string& what, int error) {
  const std::string message = absl::StrCat(what, ": ", strerror(error));
  if (error == ENOENT) return absl::NotFoundError(message);
  if (error == EACCES || error == EPERM) return absl::PermissionDeniedError(message);
  return absl::UnavailableError(message);
}

std::string ParentOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

absl::Status FsyncPath(const std::string& path, int flags) {
  const int fd = open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return ErrnoError("opening " + path + " to fsync", errno);
  const int result = fsync(fd);
  const int error = errno;
  close(fd);
  if (result != 0) return ErrnoError("fsync " + path, error);
  return absl::OkStatus();
}

}  // namespace

absl::Status MakeDirectories(const std::string& path) {
  if (path.empty()) return absl::OkStatus();
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    const std::string prefix = path.substr(0, pos);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoError("creating directory " + prefix, errno);
    }
  }
  struct stat info;
  if (stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(path, " exists and is not a directory"));
  }
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  const std::string parent = ParentOf(path);
  if (absl::Status made = MakeDirectories(parent); !made.ok()) return made;
  const std::string temp = absl::StrCat(path, ".tmp.", getpid());
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("creating " + temp, errno);
  size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = write(fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      close(fd);
      unlink(temp.c_str());
      return ErrnoError("writing " + temp, error);
    }
    written += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) {
    const int error = errno;
    close(fd);
    unlink(temp.c_str());
    return ErrnoError("fsync " + temp, error);
  }
  close(fd);
  if (rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    unlink(temp.c_str());
    return ErrnoError("renaming " + temp + " to " + path, error);
  }
  return FsyncPath(parent, O_RDONLY | O_DIRECTORY);
}

}  // namespace rollout
