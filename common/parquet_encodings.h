// Parquet's value and level encodings that common/parquet_column.h reads: PLAIN, and the
// RLE / bit-packed hybrid of levels, dictionary indices and RLE booleans.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/parquet_metadata.h"

namespace rollout::parquet {

// Appends `count` values of the RLE / bit-packed hybrid encoding of `bit_width` bits
// (0-32) in `data` to `out`. InvalidArgument when `data` ends first.
absl::Status DecodeRleHybrid(absl::string_view data, int bit_width, int64_t count,
                             std::vector<uint32_t>* out);

// Appends `count` PLAIN-encoded values of `type` from `data` to `out`: booleans, numbers
// (INT32/INT64 unsigned when `annotation` says so) and BYTE_ARRAY as text, which must be
// UTF-8. InvalidArgument when `data` ends first or a value is not UTF-8 text.
absl::Status DecodePlain(absl::string_view data, PhysicalType type, Annotation annotation,
                         int64_t count, std::vector<nlohmann::json>* out);

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or values past
// U+10FFFF).
bool IsValidUtf8(absl::string_view text);

}  // namespace rollout::parquet
