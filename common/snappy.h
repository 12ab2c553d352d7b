// Decompression of Snappy's raw format (not its framing format): the codec Parquet
// writers use by default for pages (pyarrow, Spark, verl's datasets).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::snappy {

// The bytes `compressed` encodes. InvalidArgument, naming the offset, when it is not
// valid Snappy: a truncated element, a copy reaching before the start, or output longer
// or shorter than the length its preamble declares. A declared length above 32 times
// the input is corrupt too (Snappy's densest element, a 3-byte copy of 64 bytes, gives
// under 22 bytes per input byte), so a bad preamble cannot ask for a huge allocation.
absl::StatusOr<std::string> Decompress(absl::string_view compressed);

}  // namespace rollout::snappy
