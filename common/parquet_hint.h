// verl keeps its datasets in Parquet; this project reads JSON lines. Readers of JSON lines
// check a file's first bytes with these, so that a Parquet file is one clear error that
// says how to convert it rather than a parse error on its first line.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace rollout {

// InvalidArgument naming `path`, with the one-line pandas command that writes
// `<path>.jsonl`, when `text` (the file's bytes, or at least its first four) begins with
// Parquet's magic "PAR1"; OK otherwise.
absl::Status RejectParquetText(absl::string_view text, const std::string& path);

// RejectParquetText of the file's first bytes; OK when the file cannot be read (the
// caller's own open reports that).
absl::Status RejectParquetFile(const std::string& path);

}  // namespace rollout
