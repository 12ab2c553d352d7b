#include "common/data_file_rows.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/file_util.h"
#include "common/parquet_rows.h"
#include "common/status_macros.h"

namespace rollout {
namespace {

using json = nlohmann::ordered_json;

absl::StatusOr<json> ParseObject(absl::string_view line) {
  json row;
  try {
    row = json::parse(line.begin(), line.end());
  } catch (const json::parse_error& error) {
    return absl::InvalidArgumentError(absl::StrCat("not valid JSON (error at column ", error.byte, ")"));
  }
  if (!row.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("not a JSON object but ", row.type_name()));
  }
  return row;
}

}  // namespace

absl::StatusOr<std::vector<DataFileRow>> ReadDataFileRows(const std::string& path) {
  ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  std::vector<DataFileRow> rows;
  if (parquet::HasParquetMagic(text)) {
    absl::StatusOr<std::vector<json>> values = parquet::ReadRows(text);
    if (!values.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": reading it as Parquet: ", values.status().message()));
    }
    for (size_t i = 0; i < values->size(); ++i) {
      rows.push_back({std::move((*values)[i]), absl::StrCat(path, " row ", i + 1)});
    }
    return rows;
  }
  int64_t number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    rows.push_back({ParseObject(line), absl::StrCat(path, ":", number)});
  }
  return rows;
}

}  // namespace rollout
