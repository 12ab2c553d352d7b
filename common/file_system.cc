#include "common/file_system.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace rollout {
namespace {

// The POSIX calls, most of them through common/file_util.h.
class PosixFileSystem final : public FileSystem {
 public:
  absl::Status MakeDirectories(const std::string& path) override {
    return rollout::MakeDirectories(path);
  }

  absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& path) override {
    return rollout::ListDirectory(path);
  }

  absl::StatusOr<FileInfo> Stat(const std::string& path) override {
    struct stat info;
    if (stat(path.c_str(), &info) != 0) {
      if (errno == ENOENT) return FileInfo{};
      return ErrnoError("stat " + path, errno);
    }
    return FileInfo{true, S_ISDIR(info.st_mode), static_cast<uint64_t>(info.st_size)};
  }

  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    return rollout::ReadFile(path);
  }

  absl::Status ReadFileInChunks(const std::string& path,
                                absl::FunctionRef<void(absl::string_view)> consumer) override {
    return rollout::ReadFileInChunks(path, kReadChunkBytes, consumer);
  }

  absl::Status WriteFileDurably(const std::string& path, absl::string_view contents) override {
    return rollout::WriteFileDurably(path, contents);
  }

  absl::Status Rename(const std::string& from, const std::string& to) override {
    if (rename(from.c_str(), to.c_str()) != 0) {
      return ErrnoError(absl::StrCat("renaming ", from, " to ", to), errno);
    }
    return absl::OkStatus();
  }

  absl::Status ExchangePaths(const std::string& a, const std::string& b) override {
    if (renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0) {
      return absl::OkStatus();
    }
    const int error = errno;
    if (error == EINVAL || error == ENOSYS || error == EOPNOTSUPP) {
      return absl::UnimplementedError(
          absl::StrCat("exchanging ", a, " and ", b, ": the filesystem has no RENAME_EXCHANGE"));
    }
    return ErrnoError(absl::StrCat("exchanging ", a, " and ", b), error);
  }

  absl::Status RemoveFile(const std::string& path) override {
    if (unlink(path.c_str()) != 0) return ErrnoError("removing " + path, errno);
    return absl::OkStatus();
  }

  absl::Status RemoveTree(const std::string& path) override { return rollout::RemoveTree(path); }

  absl::Status SyncDirectory(const std::string& path) override {
    return rollout::SyncDirectory(path);
  }
};

}  // namespace

FileSystem* DefaultFileSystem() {
  static FileSystem* const file_system = new PosixFileSystem();
  return file_system;
}

std::string AtomicWriteTempPath(const std::string& path) { return path + ".tmp"; }

absl::Status ReplaceFileAtomically(FileSystem& fs, const std::string& path,
                                   absl::string_view contents) {
  const std::string temp = AtomicWriteTempPath(path);
  RETURN_IF_ERROR(fs.WriteFileDurably(temp, contents));
  RETURN_IF_ERROR(fs.Rename(temp, path));
  return fs.SyncDirectory(Dirname(path));
}

}  // namespace rollout
