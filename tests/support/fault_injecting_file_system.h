// Test support: a FileSystem that passes every call to another one, except that it
// can fail the Nth mutating call (MakeDirectories, WriteFileDurably, Rename,
// ExchangePaths, RemoveFile, RemoveTree, SyncDirectory) with Unavailable, doing
// nothing, as a full disk or an I/O error would; and can act as a filesystem without
// RENAME_EXCHANGE (NFS). Reads are never failed. Thread-safe.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "common/file_system.h"

namespace rollout::testing {

class FaultInjectingFileSystem final : public FileSystem {
 public:
  explicit FaultInjectingFileSystem(FileSystem* base) : base_(base) {}

  // The `n`-th mutating call from now on fails (1 = the next one); 0 fails none.
  void FailNthMutation(int n);
  // Mutating calls made since construction (failed ones included).
  int mutations() const;
  // When false, ExchangePaths answers Unimplemented (not counted as a mutation).
  void set_exchange_supported(bool supported);

  absl::Status MakeDirectories(const std::string& path) override;
  absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& path) override;
  absl::StatusOr<FileInfo> Stat(const std::string& path) override;
  absl::StatusOr<std::string> ReadFile(const std::string& path) override;
  absl::Status ReadFileInChunks(const std::string& path,
                                absl::FunctionRef<void(absl::string_view)> consumer) override;
  absl::Status WriteFileDurably(const std::string& path, absl::string_view contents) override;
  absl::Status Rename(const std::string& from, const std::string& to) override;
  absl::Status ExchangePaths(const std::string& a, const std::string& b) override;
  absl::Status RemoveFile(const std::string& path) override;
  absl::Status RemoveTree(const std::string& path) override;
  absl::Status SyncDirectory(const std::string& path) override;

 private:
  // Counts a mutating call; the injected error when it is the one to fail.
  absl::Status Mutation(const char* operation, const std::string& path);

  FileSystem* const base_;
  mutable std::mutex mutex_;
  int mutations_ = 0;
  int fail_at_ = 0;  // the value of mutations_ whose call fails; 0: none
  bool exchange_supported_ = true;
};

}  // namespace rollout::testing
