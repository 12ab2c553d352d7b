// Test support: a fresh directory under the test temp dir, removed when it goes out
// of scope, with a helper to write files into it. Plain POSIX (see common/file_util.h
// on why not std::filesystem).
#pragma once

#include <string>

namespace rollout::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "rollout");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // `name` joined to the directory.
  std::string Path(const std::string& name) const;
  // Writes `text` to `name` (parent folders created) and returns its path.
  std::string Write(const std::string& name, const std::string& text) const;

 private:
  std::string path_;
};

}  // namespace rollout::testing
