#include "common/parquet_hint.h"

#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

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
  std::ifstream in(path, std::ios::binary);
  char head[kParquetMagic.size()];
  in.read(head, sizeof(head));
  return RejectParquetText(absl::string_view(head, static_cast<size_t>(in.gcount())), path);
}

}  // namespace rollout
