#include "tests/support/temp_dir.h"

#include <stdlib.h>

#include <fstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "common/file_util.h"

namespace rollout::testing {

TempDir::TempDir(const std::string& prefix) {
  std::string pattern = JoinPath(::testing::TempDir(), prefix + "_XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp failed for " + pattern);
  }
  path_ = pattern;
}

TempDir::~TempDir() { RemoveTree(path_).IgnoreError(); }

std::string TempDir::Path(const std::string& name) const { return JoinPath(path_, name); }

std::string TempDir::Write(const std::string& name, const std::string& text) const {
  const std::string path = Path(name);
  if (!MakeDirectories(Dirname(path)).ok()) throw std::runtime_error("cannot create " + path);
  std::ofstream(path) << text;
  return path;
}

}  // namespace rollout::testing
