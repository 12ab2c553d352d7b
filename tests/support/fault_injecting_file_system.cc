#include "tests/support/fault_injecting_file_system.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::testing {

void FaultInjectingFileSystem::FailNthMutation(int n) {
  std::lock_guard<std::mutex> lock(mutex_);
  fail_at_ = n > 0 ? mutations_ + n : 0;
}

int FaultInjectingFileSystem::mutations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return mutations_;
}

void FaultInjectingFileSystem::set_exchange_supported(bool supported) {
  std::lock_guard<std::mutex> lock(mutex_);
  exchange_supported_ = supported;
}

absl::Status FaultInjectingFileSystem::Mutation(const char* operation, const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (++mutations_ != fail_at_) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat("injected failure: ", operation, " ", path));
}

absl::Status FaultInjectingFileSystem::MakeDirectories(const std::string& path) {
  RETURN_IF_ERROR(Mutation("mkdir", path));
  return base_->MakeDirectories(path);
}

absl::StatusOr<std::vector<std::string>> FaultInjectingFileSystem::ListDirectory(
    const std::string& path) {
  return base_->ListDirectory(path);
}

absl::StatusOr<FileInfo> FaultInjectingFileSystem::Stat(const std::string& path) {
  return base_->Stat(path);
}

absl::StatusOr<std::string> FaultInjectingFileSystem::ReadFile(const std::string& path) {
  return base_->ReadFile(path);
}

absl::Status FaultInjectingFileSystem::ReadFileInChunks(
    const std::string& path, absl::FunctionRef<void(absl::string_view)> consumer) {
  return base_->ReadFileInChunks(path, consumer);
}

absl::Status FaultInjectingFileSystem::WriteFileDurably(const std::string& path,
                                                        absl::string_view contents) {
  RETURN_IF_ERROR(Mutation("write", path));
  return base_->WriteFileDurably(path, contents);
}

absl::Status FaultInjectingFileSystem::Rename(const std::string& from, const std::string& to) {
  RETURN_IF_ERROR(Mutation("rename", from));
  return base_->Rename(from, to);
}

absl::Status FaultInjectingFileSystem::ExchangePaths(const std::string& a, const std::string& b) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!exchange_supported_) {
      return absl::UnimplementedError(absl::StrCat("exchanging ", a, ": no RENAME_EXCHANGE here"));
    }
  }
  RETURN_IF_ERROR(Mutation("exchange", a));
  return base_->ExchangePaths(a, b);
}

absl::Status FaultInjectingFileSystem::RemoveFile(const std::string& path) {
  RETURN_IF_ERROR(Mutation("remove", path));
  return base_->RemoveFile(path);
}

absl::Status FaultInjectingFileSystem::RemoveTree(const std::string& path) {
  RETURN_IF_ERROR(Mutation("remove tree", path));
  return base_->RemoveTree(path);
}

absl::Status FaultInjectingFileSystem::SyncDirectory(const std::string& path) {
  RETURN_IF_ERROR(Mutation("fsync", path));
  return base_->SyncDirectory(path);
}

}  // namespace rollout::testing
