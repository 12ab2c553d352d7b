#include "common/parquet_metadata.h"

#include <functional>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/thrift_compact.h"

namespace rollout::parquet {
namespace {

using thrift::CompactReader;
using thrift::Field;

// Reads a struct's fields, handing each to `on_field`, which consumes its value (or
// calls in.Skip(field.type)).
absl::Status ReadStruct(CompactReader& in, const std::function<absl::Status(const Field&)>& on_field) {
  RETURN_IF_ERROR(in.BeginStruct());
  for (;;) {
    ASSIGN_OR_RETURN(const Field field, in.NextField());
    if (field.type == thrift::Type::kStop) break;
    RETURN_IF_ERROR(on_field(field));
  }
  return in.EndStruct();
}

// Reads a list, handing each element's index to `on_element`, which consumes it.
absl::Status ReadList(CompactReader& in, thrift::Type expected,
                      const std::function<absl::Status(int64_t)>& on_element) {
  ASSIGN_OR_RETURN(const thrift::ListHeader list, in.ReadListHeader());
  if (list.element_type != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Parquet metadata: a list of type ", static_cast<int>(list.element_type), " where ",
        static_cast<int>(expected), " belongs, at byte ", in.position()));
  }
  for (int64_t i = 0; i < list.size; ++i) RETURN_IF_ERROR(on_element(i));
  return absl::OkStatus();
}

absl::StatusOr<int32_t> ReadInt32(CompactReader& in, const Field& field) {
  ASSIGN_OR_RETURN(const int64_t value, in.ReadInt(field.type));
  if (value < INT32_MIN || value > INT32_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat("Parquet metadata: field ", field.id, " holds ", value, ", past 32 bits"));
  }
  return static_cast<int32_t>(value);
}

// An enum field's value, checked against [0, last].
template <typename Enum>
absl::StatusOr<Enum> ReadEnum(CompactReader& in, const Field& field, int32_t last,
                              absl::string_view what) {
  ASSIGN_OR_RETURN(const int32_t value, ReadInt32(in, field));
  if (value < 0 || value > last) {
    return absl::InvalidArgumentError(absl::StrCat("Parquet metadata: unknown ", what, " ", value));
  }
  return static_cast<Enum>(value);
}

// ConvertedType, the annotation of files before LogicalType (and written beside it).
std::pair<Annotation, std::string> FromConvertedType(int32_t value) {
  static const char* const kNames[] = {
      "UTF8",   "MAP",          "MAP_KEY_VALUE",    "LIST",         "ENUM",
      "DECIMAL", "DATE",        "TIME_MILLIS",      "TIME_MICROS",  "TIMESTAMP_MILLIS",
      "TIMESTAMP_MICROS", "UINT_8", "UINT_16",      "UINT_32",      "UINT_64",
      "INT_8",  "INT_16",       "INT_32",           "INT_64",       "JSON",
      "BSON",   "INTERVAL"};
  const std::string name = value >= 0 && value <= 21 ? kNames[value] : absl::StrCat("converted type ", value);
  switch (value) {
    case 0: case 4: case 19: return {Annotation::kString, name};
    case 1: case 2: return {Annotation::kMap, name};
    case 3: return {Annotation::kList, name};
    case 11: case 12: case 13: case 14: return {Annotation::kUnsignedInt, name};
    case 15: case 16: case 17: case 18: return {Annotation::kSignedInt, name};
    default: return {Annotation::kOther, name};
  }
}

// The LogicalType union: one field set, its id naming the type.
absl::Status ReadLogicalType(CompactReader& in, SchemaElement& element) {
  return ReadStruct(in, [&](const Field& field) -> absl::Status {
    static const char* const kNames[] = {"", "STRING", "MAP", "LIST", "ENUM", "DECIMAL", "DATE",
                                         "TIME", "TIMESTAMP", "", "INTEGER", "UNKNOWN", "JSON",
                                         "BSON", "UUID", "FLOAT16"};
    element.annotation_name = field.id > 0 && field.id <= 15 ? kNames[field.id]
                                                             : absl::StrCat("logical type ", field.id);
    switch (field.id) {
      case 1: case 4: case 12: element.annotation = Annotation::kString; break;
      case 2: element.annotation = Annotation::kMap; break;
      case 3: element.annotation = Annotation::kList; break;
      case 11: element.annotation = Annotation::kNone; break;  // always null
      case 10: {
        bool is_signed = true;
        RETURN_IF_ERROR(ReadStruct(in, [&](const Field& int_field) -> absl::Status {
          if (int_field.id != 2) return in.Skip(int_field.type);
          ASSIGN_OR_RETURN(is_signed, in.ReadBool(int_field.type));
          return absl::OkStatus();
        }));
        element.annotation = is_signed ? Annotation::kSignedInt : Annotation::kUnsignedInt;
        return absl::OkStatus();
      }
      default: element.annotation = Annotation::kOther; break;
    }
    return in.Skip(field.type);
  });
}

absl::Status ReadSchemaElement(CompactReader& in, SchemaElement& element) {
  bool has_logical_type = false;
  std::pair<Annotation, std::string> converted{Annotation::kNone, ""};
  RETURN_IF_ERROR(ReadStruct(in, [&](const Field& field) -> absl::Status {
    switch (field.id) {
      case 1: {
        ASSIGN_OR_RETURN(element.type, ReadEnum<PhysicalType>(in, field, 7, "physical type"));
        break;
      }
      case 3: {
        ASSIGN_OR_RETURN(element.repetition, ReadEnum<Repetition>(in, field, 2, "repetition"));
        break;
      }
      case 4: {
        ASSIGN_OR_RETURN(element.name, in.ReadBinary());
        break;
      }
      case 5: {
        ASSIGN_OR_RETURN(element.num_children, ReadInt32(in, field));
        break;
      }
      case 6: {
        ASSIGN_OR_RETURN(const int32_t value, ReadInt32(in, field));
        converted = FromConvertedType(value);
        break;
      }
      case 10:
        has_logical_type = true;
        return ReadLogicalType(in, element);
      default: return in.Skip(field.type);
    }
    return absl::OkStatus();
  }));
  if (!has_logical_type) std::tie(element.annotation, element.annotation_name) = converted;
  return absl::OkStatus();
}

absl::Status ReadColumnMetaData(CompactReader& in, ColumnChunk& column) {
  return ReadStruct(in, [&](const Field& field) -> absl::Status {
    switch (field.id) {
      case 1: {
        ASSIGN_OR_RETURN(column.type, ReadEnum<PhysicalType>(in, field, 7, "physical type"));
        break;
      }
      case 3:
        return ReadList(in, thrift::Type::kBinary, [&](int64_t) -> absl::Status {
          ASSIGN_OR_RETURN(std::string part, in.ReadBinary());
          column.path.push_back(std::move(part));
          return absl::OkStatus();
        });
      case 4: {
        ASSIGN_OR_RETURN(column.codec, ReadEnum<Codec>(in, field, 7, "compression codec"));
        break;
      }
      case 5: {
        ASSIGN_OR_RETURN(column.num_values, in.ReadInt(field.type));
        break;
      }
      case 7: {
        ASSIGN_OR_RETURN(column.total_compressed_size, in.ReadInt(field.type));
        break;
      }
      case 9: {
        ASSIGN_OR_RETURN(column.data_page_offset, in.ReadInt(field.type));
        break;
      }
      case 11: {
        ASSIGN_OR_RETURN(column.dictionary_page_offset, in.ReadInt(field.type));
        break;
      }
      default: return in.Skip(field.type);
    }
    return absl::OkStatus();
  });
}

absl::Status ReadRowGroup(CompactReader& in, RowGroup& group) {
  return ReadStruct(in, [&](const Field& field) -> absl::Status {
    if (field.id == 3) {
      ASSIGN_OR_RETURN(group.num_rows, in.ReadInt(field.type));
      return absl::OkStatus();
    }
    if (field.id != 1) return in.Skip(field.type);
    return ReadList(in, thrift::Type::kStruct, [&](int64_t) -> absl::Status {
      ColumnChunk& column = group.columns.emplace_back();
      return ReadStruct(in, [&](const Field& chunk_field) -> absl::Status {
        if (chunk_field.id == 1) column.in_other_file = true;
        if (chunk_field.id == 3) return ReadColumnMetaData(in, column);
        return in.Skip(chunk_field.type);
      });
    });
  });
}

}  // namespace

absl::StatusOr<FileMetaData> ParseFileMetaData(absl::string_view footer) {
  CompactReader in(footer);
  FileMetaData metadata;
  RETURN_IF_ERROR(ReadStruct(in, [&](const Field& field) -> absl::Status {
    switch (field.id) {
      case 2:
        return ReadList(in, thrift::Type::kStruct, [&](int64_t) {
          return ReadSchemaElement(in, metadata.schema.emplace_back());
        });
      case 3: {
        ASSIGN_OR_RETURN(metadata.num_rows, in.ReadInt(field.type));
        break;
      }
      case 4:
        return ReadList(in, thrift::Type::kStruct, [&](int64_t) {
          return ReadRowGroup(in, metadata.row_groups.emplace_back());
        });
      default: return in.Skip(field.type);
    }
    return absl::OkStatus();
  }));
  return metadata;
}

absl::StatusOr<PageHeader> ParsePageHeader(absl::string_view bytes, size_t* header_size) {
  CompactReader in(bytes);
  PageHeader header;
  // DataPageHeader (5), DictionaryPageHeader (7) and DataPageHeaderV2 (8) share field 1
  // (num_values) and 2 or 4 (encoding).
  auto read_page_kind = [&](const Field& kind) -> absl::Status {
    return ReadStruct(in, [&](const Field& field) -> absl::Status {
      const bool v2 = kind.id == 8;
      if (field.id == 1) {
        ASSIGN_OR_RETURN(header.num_values, ReadInt32(in, field));
      } else if ((!v2 && field.id == 2) || (v2 && field.id == 4)) {
        ASSIGN_OR_RETURN(header.encoding, ReadEnum<Encoding>(in, field, 9, "encoding"));
      } else if (kind.id == 5 && field.id == 3) {
        ASSIGN_OR_RETURN(header.definition_level_encoding, ReadEnum<Encoding>(in, field, 9, "encoding"));
      } else if (kind.id == 5 && field.id == 4) {
        ASSIGN_OR_RETURN(header.repetition_level_encoding, ReadEnum<Encoding>(in, field, 9, "encoding"));
      } else if (v2 && field.id == 5) {
        ASSIGN_OR_RETURN(header.definition_levels_byte_length, ReadInt32(in, field));
      } else if (v2 && field.id == 6) {
        ASSIGN_OR_RETURN(header.repetition_levels_byte_length, ReadInt32(in, field));
      } else if (v2 && field.id == 7) {
        ASSIGN_OR_RETURN(header.is_compressed, in.ReadBool(field.type));
      } else {
        return in.Skip(field.type);
      }
      return absl::OkStatus();
    });
  };
  RETURN_IF_ERROR(ReadStruct(in, [&](const Field& field) -> absl::Status {
    switch (field.id) {
      case 1: {
        ASSIGN_OR_RETURN(header.type, ReadEnum<PageType>(in, field, 3, "page type"));
        break;
      }
      case 2: {
        ASSIGN_OR_RETURN(header.uncompressed_page_size, ReadInt32(in, field));
        break;
      }
      case 3: {
        ASSIGN_OR_RETURN(header.compressed_page_size, ReadInt32(in, field));
        break;
      }
      case 5: case 7: case 8: return read_page_kind(field);
      default: return in.Skip(field.type);
    }
    return absl::OkStatus();
  }));
  *header_size = in.position();
  return header;
}

std::string CodecName(Codec codec) {
  static const char* const kNames[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"};
  return kNames[static_cast<int>(codec)];
}

std::string EncodingName(Encoding encoding) {
  static const char* const kNames[] = {"PLAIN", "GROUP_VAR_INT", "PLAIN_DICTIONARY", "RLE", "BIT_PACKED",
                                       "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY",
                                       "DELTA_BYTE_ARRAY", "RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};
  return kNames[static_cast<int>(encoding)];
}

std::string PhysicalTypeName(PhysicalType type) {
  static const char* const kNames[] = {"BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE",
                                       "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
  return kNames[static_cast<int>(type)];
}

}  // namespace rollout::parquet
