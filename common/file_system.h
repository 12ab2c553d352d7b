// FileSystem: the file operations of the checkpoint protocol behind one interface
// (LevelDB's Env), so that tests can fail the Nth write, rename or fsync and check
// what a crash or an I/O error leaves behind.
//
// Every operation returns a Status whose message names the path: NotFound for a
// missing path, PermissionDenied, Unavailable for other I/O errors (as
// common/file_util.h maps errno). Nothing here is atomic unless it says so.
// Implementations must be thread-safe; DefaultFileSystem() is.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout {

struct FileInfo {
  bool exists = false;
  bool is_directory = false;
  uint64_t size = 0;  // bytes, for a regular file
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Creates `path` and its missing parents (`mkdir -p`).
  virtual absl::Status MakeDirectories(const std::string& path) = 0;
  // Names in the directory (no "." and ".."), sorted.
  virtual absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& path) = 0;
  // exists == false (and OK) when nothing is at `path`. Symlinks are followed.
  virtual absl::StatusOr<FileInfo> Stat(const std::string& path) = 0;

  // The whole file; for small files (manifests, state, the tracker).
  virtual absl::StatusOr<std::string> ReadFile(const std::string& path) = 0;
  // Calls `consumer` with the file's bytes in order, in chunks of at most
  // kReadChunkBytes, without holding the whole file (checksums of multi-GB files).
  static constexpr size_t kReadChunkBytes = 1 << 20;
  virtual absl::Status ReadFileInChunks(const std::string& path,
                                        absl::FunctionRef<void(absl::string_view)> consumer) = 0;

  // Creates or truncates `path`, writes `contents` and fsyncs the file. Not atomic:
  // a crash can leave a partial file. The directory entry is durable only after
  // SyncDirectory() of the parent.
  virtual absl::Status WriteFileDurably(const std::string& path, absl::string_view contents) = 0;

  // rename(2): atomic; replaces a file or an empty directory at `to`.
  virtual absl::Status Rename(const std::string& from, const std::string& to) = 0;
  // Atomically swaps two existing paths (renameat2 RENAME_EXCHANGE). Unimplemented
  // when the filesystem cannot do it (e.g. NFS); callers then need another way.
  virtual absl::Status ExchangePaths(const std::string& a, const std::string& b) = 0;

  // Removes one file; NotFound when it does not exist.
  virtual absl::Status RemoveFile(const std::string& path) = 0;
  // Removes `path` and everything under it; OK when it does not exist.
  virtual absl::Status RemoveTree(const std::string& path) = 0;
  // fsync of a directory: makes creations, renames and removals in it durable.
  virtual absl::Status SyncDirectory(const std::string& path) = 0;
};

// The POSIX implementation (common/file_util.h underneath). Never deleted.
FileSystem* DefaultFileSystem();

// Replaces `path` with `contents` so that a crash leaves the old file or the new
// one: writes `<path>.tmp`, fsyncs it, renames it over `path`, fsyncs the parent.
// One writer per path at a time (the temporary name is fixed so that a crashed
// writer's leftover is recognisable: AtomicWriteTempPath()).
absl::Status ReplaceFileAtomically(FileSystem& fs, const std::string& path,
                                   absl::string_view contents);
std::string AtomicWriteTempPath(const std::string& path);

}  // namespace rollout
