// Filesystem helpers with crash-safe semantics.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace rollout {

// Creates `path` and its missing parents (like `mkdir -p`).
absl::Status MakeDirectories(const std::string& path);

// Replaces `path` with `contents` so that a crash leaves either the old file or the
// new one, never a mix: writes `<path>.tmp.<pid>`, fsyncs it, renames it over `path`,
// then fsyncs the directory. Creates missing parent directories.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);

}  // namespace rollout
