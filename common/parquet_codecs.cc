#include "common/parquet_codecs.h"

#include <zlib.h>
#include <zstd.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/snappy.h"
#include "common/status_macros.h"

namespace rollout::parquet {
namespace {

absl::Status SizeMismatch(int64_t decoded, int64_t expected) {
  return absl::InvalidArgumentError(
      absl::StrCat("a page of ", decoded, " bytes where its header says ", expected));
}

// A gzip (or zlib) stream; gzip's trailer holds the size mod 2^32, checked first.
absl::StatusOr<std::string> Inflate(absl::string_view stored, int64_t size) {
  const bool gzip = stored.size() >= 18 && static_cast<uint8_t>(stored[0]) == 0x1f &&
                    static_cast<uint8_t>(stored[1]) == 0x8b;
  if (gzip) {
    uint32_t trailer_size;
    std::memcpy(&trailer_size, stored.data() + stored.size() - 4, 4);
    if (trailer_size != static_cast<uint32_t>(size)) return SizeMismatch(trailer_size, size);
  }
  std::string out(size, '\0');
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 32) != Z_OK) return absl::InternalError("zlib: inflateInit2 failed");
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(stored.data()));
  stream.avail_in = static_cast<uInt>(stored.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = inflate(&stream, Z_FINISH);
  const int64_t produced = static_cast<int64_t>(stream.total_out);
  inflateEnd(&stream);
  if (result != Z_STREAM_END) {
    return absl::InvalidArgumentError(absl::StrCat("GZIP data: ", result == Z_BUF_ERROR ? "more than the page's "
                                                   "size, or truncated" : "corrupt", " (zlib error ", result, ")"));
  }
  if (produced != size) return SizeMismatch(produced, size);
  return out;
}

absl::StatusOr<std::string> ZstdDecompress(absl::string_view stored, int64_t size) {
  const unsigned long long declared = ZSTD_getFrameContentSize(stored.data(), stored.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR) return absl::InvalidArgumentError("ZSTD data: not a zstd frame");
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != static_cast<unsigned long long>(size)) {
    return SizeMismatch(static_cast<int64_t>(declared), size);
  }
  std::string out(size, '\0');
  const size_t produced = ZSTD_decompress(out.data(), out.size(), stored.data(), stored.size());
  if (ZSTD_isError(produced)) {
    return absl::InvalidArgumentError(absl::StrCat("ZSTD data: ", ZSTD_getErrorName(produced)));
  }
  if (static_cast<int64_t>(produced) != size) return SizeMismatch(static_cast<int64_t>(produced), size);
  return out;
}

}  // namespace

absl::StatusOr<std::string> DecompressPage(absl::string_view stored, Codec codec, int64_t uncompressed_size) {
  if (uncompressed_size < 0) return absl::InvalidArgumentError("a negative uncompressed page size");
  switch (codec) {
    case Codec::kUncompressed:
      if (static_cast<int64_t>(stored.size()) != uncompressed_size) {
        return SizeMismatch(static_cast<int64_t>(stored.size()), uncompressed_size);
      }
      return std::string(stored);
    case Codec::kSnappy: {
      ASSIGN_OR_RETURN(std::string bytes, snappy::Decompress(stored));
      if (static_cast<int64_t>(bytes.size()) != uncompressed_size) {
        return SizeMismatch(static_cast<int64_t>(bytes.size()), uncompressed_size);
      }
      return bytes;
    }
    case Codec::kGzip: return Inflate(stored, uncompressed_size);
    case Codec::kZstd: return ZstdDecompress(stored, uncompressed_size);
    default: break;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "compressed with ", CodecName(codec),
      "; this reader decodes uncompressed, SNAPPY, GZIP and ZSTD pages"));
}

}  // namespace rollout::parquet
