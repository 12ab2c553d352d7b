// Decompression of Parquet pages: uncompressed, SNAPPY (common/snappy.h), GZIP (zlib)
// and ZSTD (libzstd), the codecs Parquet writers use most (pyarrow's default is SNAPPY,
// polars' ZSTD). Other codecs (BROTLI, LZ4, LZO) are an error naming them.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/parquet_metadata.h"

namespace rollout::parquet {

// The `uncompressed_size` bytes that `stored` holds under `codec`. InvalidArgument when
// the bytes do not decode to exactly that size. The size is checked against what the
// stored bytes declare (Snappy's preamble, gzip's trailer, a zstd frame's header) before
// the output is allocated, so a corrupt page header cannot ask for gigabytes.
absl::StatusOr<std::string> DecompressPage(absl::string_view stored, Codec codec, int64_t uncompressed_size);

}  // namespace rollout::parquet
