// The rows of a dataset file in either format verl's users keep data in: JSON lines
// (one JSON object a non-blank line) or Parquet (common/parquet_rows.h, each row an
// object), told apart by Parquet's magic bytes. The one reader behind the trainer's
// datasets, `rollout generate --input` and `rollout score --input`.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace rollout {

struct DataFileRow {
  // The row, or InvalidArgument saying why a line is not one ("not valid JSON (error at
  // column 7)", "not a JSON object but array"), without its location.
  // Keys in the file's order (chat templates write tool schemas in it).
  absl::StatusOr<nlohmann::ordered_json> object;
  std::string where;  // "FILE:LINE" (JSON lines) or "FILE row N" (Parquet; both 1-based)
};

// Every row of `path`, blank lines skipped. ReadFile's errors for the file;
// InvalidArgument "PATH: reading it as Parquet: ..." for a Parquet file that cannot
// be read (the whole file is decoded before any row is returned).
absl::StatusOr<std::vector<DataFileRow>> ReadDataFileRows(const std::string& path);

}  // namespace rollout
