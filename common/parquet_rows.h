// The rows of a Parquet file — verl's dataset format — as JSON objects, so that the
// readers of JSON-lines datasets (controller/dataset.h) take Parquet files as they are.
//
// A row is an object of its top-level columns. Groups (structs) read as objects, lists
// (LIST-annotated groups, in their 3-level and legacy 2-level forms, and bare repeated
// fields) as arrays; leaves as booleans, integers, floating-point numbers and text; an
// absent value as null. So verl's gsm8k.parquet row reads as
//   {"data_source": "openai/gsm8k", "prompt": [{"content": "...", "role": "user"}],
//    "ability": "math", "reward_model": {"ground_truth": "72", "style": "rule"},
//    "extra_info": {"answer": "...", "index": 0, "question": "...", "split": "train"}}
//
// Not read, each an error naming the column: MAP columns, INT96 and fixed-length byte
// arrays, decimals, dates, times and timestamps, binary that is not UTF-8; codecs other
// than SNAPPY, GZIP, ZSTD or none; encodings other than PLAIN and dictionary; encrypted
// files.
// Column chunks are decoded one at a time; the rows of the whole file are built in
// memory (datasets are read whole, as JSON lines are).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::parquet {

// Whether `bytes` (a file's contents, or at least its first 4 bytes) begin with
// Parquet's magic "PAR1".
bool HasParquetMagic(absl::string_view bytes);

// Every row of the Parquet file whose contents are `bytes`, in order. InvalidArgument
// saying what is wrong and where (column, row group, page) when the file is corrupt or
// holds what is not read (above); the caller adds the file's name.
absl::StatusOr<std::vector<nlohmann::ordered_json>> ReadRows(absl::string_view bytes);

}  // namespace rollout::parquet
