// Parquet's footer (FileMetaData) and page headers, decoded from their Thrift compact
// encoding (common/thrift_compact.h) into the few fields a row reader needs
// (common/parquet_rows.h). Field numbers and enum values are those of the format's
// parquet.thrift; what this reader does not use is skipped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::parquet {

enum class PhysicalType : int32_t {
  kBoolean = 0,
  kInt32 = 1,
  kInt64 = 2,
  kInt96 = 3,
  kFloat = 4,
  kDouble = 5,
  kByteArray = 6,
  kFixedLenByteArray = 7,
};

enum class Repetition : int32_t { kRequired = 0, kOptional = 1, kRepeated = 2 };

// The annotations (ConvertedType, or the LogicalType union that replaced it) that
// change how a column reads, folded into one.
enum class Annotation {
  kNone,
  kString,  // UTF8 / STRING, ENUM, JSON: text
  kList,
  kMap,     // MAP or MAP_KEY_VALUE
  kSignedInt,
  kUnsignedInt,
  kOther,   // decimals, dates, times, timestamps, UUIDs, ...: not read here
};

enum class Encoding : int32_t {
  kPlain = 0,
  kPlainDictionary = 2,
  kRle = 3,
  kBitPacked = 4,
  kDeltaBinaryPacked = 5,
  kDeltaLengthByteArray = 6,
  kDeltaByteArray = 7,
  kRleDictionary = 8,
  kByteStreamSplit = 9,
};

enum class Codec : int32_t {
  kUncompressed = 0,
  kSnappy = 1,
  kGzip = 2,
  kLzo = 3,
  kBrotli = 4,
  kLz4 = 5,
  kZstd = 6,
  kLz4Raw = 7,
};

struct SchemaElement {
  std::string name;
  std::optional<PhysicalType> type;  // absent for groups
  Repetition repetition = Repetition::kRequired;  // the root's is absent: required
  int32_t num_children = 0;
  Annotation annotation = Annotation::kNone;
  std::string annotation_name;  // the converted/logical type's name, for errors
};

struct ColumnChunk {
  PhysicalType type = PhysicalType::kBoolean;
  std::vector<std::string> path;  // path_in_schema
  Codec codec = Codec::kUncompressed;
  int64_t num_values = 0;
  int64_t total_compressed_size = 0;
  int64_t data_page_offset = 0;
  std::optional<int64_t> dictionary_page_offset;
  bool in_other_file = false;  // file_path set: the chunk lives in another file
};

struct RowGroup {
  std::vector<ColumnChunk> columns;  // one per leaf of the schema, in schema order
  int64_t num_rows = 0;
};

struct FileMetaData {
  std::vector<SchemaElement> schema;  // depth first; schema[0] is the root
  int64_t num_rows = 0;
  std::vector<RowGroup> row_groups;
};

enum class PageType : int32_t { kDataPage = 0, kIndexPage = 1, kDictionaryPage = 2, kDataPageV2 = 3 };

struct PageHeader {
  PageType type = PageType::kDataPage;
  int32_t uncompressed_page_size = 0;
  int32_t compressed_page_size = 0;
  // Data pages (v1 and v2) and dictionary pages.
  int32_t num_values = 0;
  Encoding encoding = Encoding::kPlain;
  // v1 data pages.
  Encoding definition_level_encoding = Encoding::kRle;
  Encoding repetition_level_encoding = Encoding::kRle;
  // v2 data pages: levels stored uncompressed ahead of the values.
  int32_t definition_levels_byte_length = 0;
  int32_t repetition_levels_byte_length = 0;
  bool is_compressed = true;
};

// The footer's FileMetaData from its bytes (between the data and the trailing length).
absl::StatusOr<FileMetaData> ParseFileMetaData(absl::string_view footer);

// A page header at the start of `bytes`; `*header_size` gets its length in bytes.
absl::StatusOr<PageHeader> ParsePageHeader(absl::string_view bytes, size_t* header_size);

// "SNAPPY", "PLAIN", "INT64", ... for messages.
std::string CodecName(Codec codec);
std::string EncodingName(Encoding encoding);
std::string PhysicalTypeName(PhysicalType type);

}  // namespace rollout::parquet
