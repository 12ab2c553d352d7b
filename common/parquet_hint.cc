#include "common/parquet_hint.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"

namespace rollout {
namespace {

// Parquet files begin (and end) with these four bytes.
constexpr absl::string_view kParquetMagic = "PAR1";

}  // namespace

absl::Status RejectParquetText(absl::string_view text, const std::string& path) {
  if (!absl::StartsWith(text, kParquetMagic)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      path, " is a Parquet file (verl's format); this reads JSON lines, one object a line. "
      "Convert it once: python3 -c \"import pandas; pandas.read_parquet('", path, "').to_json('",
      path, ".jsonl', orient='records', lines=True, force_ascii=False)\""));
}

absl::Status RejectParquetFile(const std::string& path) {
  const absl::StatusOr<std::string> head = ReadFileHead(path, kParquetMagic.size());
  return head.ok() ? RejectParquetText(*head, path) : absl::OkStatus();
}

}  // namespace rollout
