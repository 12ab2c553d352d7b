// One column chunk of a Parquet file decoded into its repetition and definition levels
// and its present values, as JSON values; common/parquet_rows.h assembles rows from
// them. Reads v1 and v2 data pages (compressed as common/parquet_codecs.h reads) with
// PLAIN and dictionary encodings (and RLE booleans) — what pyarrow (under pandas, HF
// datasets and verl's preprocessing) writes by default. Other encodings are an error
// naming them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/parquet_metadata.h"

namespace rollout::parquet {

// What the schema says of a leaf column.
struct LeafColumn {
  std::string name;  // its path, dotted, for messages
  PhysicalType type = PhysicalType::kBoolean;
  Annotation annotation = Annotation::kNone;  // kNone, kString, kSignedInt or kUnsignedInt
  int max_definition_level = 0;
  int max_repetition_level = 0;
};

struct ColumnValues {
  // One entry per level triple; each empty when its maximum level is 0 (all zeros).
  std::vector<int16_t> repetition_levels, definition_levels;
  // The values of the triples whose definition level is the maximum, in order: numbers,
  // booleans, and text (BYTE_ARRAY that is valid UTF-8).
  std::vector<nlohmann::json> values;
  int64_t size = 0;  // level triples
};

// Decodes `chunk` of `file` (the whole file's bytes). InvalidArgument with what went
// wrong and where (page, byte offset) — the caller adds the column's name.
absl::StatusOr<ColumnValues> ReadColumnChunk(absl::string_view file, const ColumnChunk& chunk,
                                             const LeafColumn& leaf);

}  // namespace rollout::parquet
