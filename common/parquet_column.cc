#include "common/parquet_column.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/parquet_codecs.h"
#include "common/parquet_encodings.h"
#include "common/status_macros.h"

namespace rollout::parquet {
namespace {

int BitWidth(int max_level) {
  int bits = 0;
  while ((1 << bits) <= max_level) ++bits;
  return bits;
}

// Levels of a v1 data page: a 4-byte length, then that many bytes of RLE hybrid.
// Advances `*body` past them.
absl::Status ReadV1Levels(absl::string_view* body, Encoding encoding, int max_level, int64_t count,
                          std::vector<int16_t>* levels) {
  if (max_level == 0) return absl::OkStatus();
  if (encoding != Encoding::kRle) {
    return absl::InvalidArgumentError(absl::StrCat("levels encoded ", EncodingName(encoding),
                                                   ", which this reader does not decode"));
  }
  if (body->size() < 4) return absl::InvalidArgumentError("levels' length runs past the page");
  uint32_t length;
  std::memcpy(&length, body->data(), 4);
  body->remove_prefix(4);
  if (length > body->size()) return absl::InvalidArgumentError("levels run past the page");
  std::vector<uint32_t> decoded;
  RETURN_IF_ERROR(DecodeRleHybrid(body->substr(0, length), BitWidth(max_level), count, &decoded));
  body->remove_prefix(length);
  for (const uint32_t level : decoded) {
    if (level > static_cast<uint32_t>(max_level)) {
      return absl::InvalidArgumentError(absl::StrCat("a level of ", level, " above the column's ", max_level));
    }
    levels->push_back(static_cast<int16_t>(level));
  }
  return absl::OkStatus();
}

// Levels of a v2 data page: `bytes` of RLE hybrid, no length prefix.
absl::Status ReadV2Levels(absl::string_view bytes, int max_level, int64_t count, std::vector<int16_t>* levels) {
  if (max_level == 0) return absl::OkStatus();
  std::vector<uint32_t> decoded;
  RETURN_IF_ERROR(DecodeRleHybrid(bytes, BitWidth(max_level), count, &decoded));
  for (const uint32_t level : decoded) {
    if (level > static_cast<uint32_t>(max_level)) {
      return absl::InvalidArgumentError(absl::StrCat("a level of ", level, " above the column's ", max_level));
    }
    levels->push_back(static_cast<int16_t>(level));
  }
  return absl::OkStatus();
}

class ChunkDecoder {
 public:
  ChunkDecoder(const ColumnChunk& chunk, const LeafColumn& leaf) : chunk_(chunk), leaf_(leaf) {}

  absl::Status Page(const PageHeader& header, absl::string_view stored) {
    switch (header.type) {
      case PageType::kDictionaryPage: return Dictionary(header, stored);
      case PageType::kDataPage: return DataV1(header, stored);
      case PageType::kDataPageV2: return DataV2(header, stored);
      case PageType::kIndexPage: return absl::OkStatus();
    }
    return absl::OkStatus();
  }

  ColumnValues Take() { return std::move(out_); }

 private:
  absl::Status Dictionary(const PageHeader& header, absl::string_view stored) {
    if (header.encoding != Encoding::kPlain && header.encoding != Encoding::kPlainDictionary) {
      return absl::InvalidArgumentError(
          absl::StrCat("a dictionary encoded ", EncodingName(header.encoding)));
    }
    ASSIGN_OR_RETURN(const std::string bytes, DecompressPage(stored, chunk_.codec, header.uncompressed_page_size));
    dictionary_.clear();
    return DecodePlain(bytes, leaf_.type, leaf_.annotation, header.num_values, &dictionary_);
  }

  absl::Status DataV1(const PageHeader& header, absl::string_view stored) {
    ASSIGN_OR_RETURN(const std::string bytes, DecompressPage(stored, chunk_.codec, header.uncompressed_page_size));
    absl::string_view body = bytes;
    RETURN_IF_ERROR(ReadV1Levels(&body, header.repetition_level_encoding, leaf_.max_repetition_level,
                                 header.num_values, &out_.repetition_levels));
    const size_t first_level = out_.definition_levels.size();
    RETURN_IF_ERROR(ReadV1Levels(&body, header.definition_level_encoding, leaf_.max_definition_level,
                                 header.num_values, &out_.definition_levels));
    return Values(header, body, first_level);
  }

  absl::Status DataV2(const PageHeader& header, absl::string_view stored) {
    const int64_t levels_size =
        static_cast<int64_t>(header.repetition_levels_byte_length) + header.definition_levels_byte_length;
    if (header.repetition_levels_byte_length < 0 || header.definition_levels_byte_length < 0 ||
        levels_size > static_cast<int64_t>(stored.size())) {
      return absl::InvalidArgumentError("a v2 page's levels run past the page");
    }
    RETURN_IF_ERROR(ReadV2Levels(stored.substr(0, header.repetition_levels_byte_length),
                                 leaf_.max_repetition_level, header.num_values, &out_.repetition_levels));
    const size_t first_level = out_.definition_levels.size();
    RETURN_IF_ERROR(ReadV2Levels(stored.substr(header.repetition_levels_byte_length,
                                               header.definition_levels_byte_length),
                                 leaf_.max_definition_level, header.num_values, &out_.definition_levels));
    const absl::string_view stored_values = stored.substr(levels_size);
    std::string values;
    if (header.is_compressed) {
      ASSIGN_OR_RETURN(values, DecompressPage(stored_values, chunk_.codec, header.uncompressed_page_size - levels_size));
    } else {
      values = std::string(stored_values);
    }
    return Values(header, values, first_level);
  }

  // The page's present values: those whose definition level (from `first_level` on) is
  // the column's maximum.
  absl::Status Values(const PageHeader& header, absl::string_view bytes, size_t first_level) {
    int64_t present = header.num_values;
    if (leaf_.max_definition_level > 0) {
      present = std::count(out_.definition_levels.begin() + first_level, out_.definition_levels.end(),
                           static_cast<int16_t>(leaf_.max_definition_level));
    }
    out_.size += header.num_values;
    switch (header.encoding) {
      case Encoding::kPlain:
        return DecodePlain(bytes, leaf_.type, leaf_.annotation, present, &out_.values);
      case Encoding::kPlainDictionary:
      case Encoding::kRleDictionary: return DictionaryValues(bytes, present);
      case Encoding::kRle: {
        if (leaf_.type != PhysicalType::kBoolean) break;
        if (bytes.size() < 4) return absl::InvalidArgumentError("RLE booleans' length runs past the page");
        std::vector<uint32_t> bits;
        RETURN_IF_ERROR(DecodeRleHybrid(bytes.substr(4), 1, present, &bits));
        for (const uint32_t bit : bits) out_.values.push_back(bit != 0);
        return absl::OkStatus();
      }
      default: break;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "values encoded ", EncodingName(header.encoding),
        "; this reader decodes PLAIN and dictionary pages (pyarrow's default)"));
  }

  absl::Status DictionaryValues(absl::string_view bytes, int64_t present) {
    if (present == 0) return absl::OkStatus();
    if (bytes.empty()) return absl::InvalidArgumentError("dictionary indices without their bit width");
    std::vector<uint32_t> indices;
    RETURN_IF_ERROR(DecodeRleHybrid(bytes.substr(1), static_cast<uint8_t>(bytes[0]), present, &indices));
    for (const uint32_t index : indices) {
      if (index >= dictionary_.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("dictionary index ", index, " of a dictionary of ", dictionary_.size()));
      }
      out_.values.push_back(dictionary_[index]);
    }
    return absl::OkStatus();
  }

  const ColumnChunk& chunk_;
  const LeafColumn& leaf_;
  std::vector<nlohmann::json> dictionary_;
  ColumnValues out_;
};

}  // namespace

absl::StatusOr<ColumnValues> ReadColumnChunk(absl::string_view file, const ColumnChunk& chunk,
                                             const LeafColumn& leaf) {
  if (chunk.in_other_file) return absl::InvalidArgumentError("the chunk lives in another file");
  int64_t start = chunk.data_page_offset;
  if (chunk.dictionary_page_offset.has_value() && *chunk.dictionary_page_offset > 0 &&
      *chunk.dictionary_page_offset < start) {
    start = *chunk.dictionary_page_offset;
  }
  if (start < 4 || chunk.total_compressed_size < 0 ||
      chunk.total_compressed_size > static_cast<int64_t>(file.size()) - start) {
    return absl::InvalidArgumentError(absl::StrCat("the chunk's bytes [", start, ", +",
                                                   chunk.total_compressed_size, ") lie outside the file"));
  }
  const absl::string_view bytes = file.substr(start, chunk.total_compressed_size);
  ChunkDecoder decoder(chunk, leaf);
  size_t at = 0;
  int64_t values = 0;
  for (int page = 0; values < chunk.num_values; ++page) {
    const std::string where = absl::StrCat("page ", page, " at byte ", start + at);
    if (at >= bytes.size()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": the chunk ends after ", values, " of its ",
                                                     chunk.num_values, " values"));
    }
    size_t header_size = 0;
    absl::StatusOr<PageHeader> header = ParsePageHeader(bytes.substr(at), &header_size);
    RETURN_IF_ERROR(WithContext(header.status(), where));
    if (header->compressed_page_size < 0 ||
        static_cast<size_t>(header->compressed_page_size) > bytes.size() - at - header_size) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": the page runs past its chunk"));
    }
    const bool data_page = header->type == PageType::kDataPage || header->type == PageType::kDataPageV2;
    if (header->num_values < 0 || (data_page && header->num_values > chunk.num_values - values)) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", header->num_values, " values where the chunk has ",
                                                     chunk.num_values - values, " left"));
    }
    RETURN_IF_ERROR(WithContext(decoder.Page(*header, bytes.substr(at + header_size, header->compressed_page_size)), where));
    if (data_page) values += header->num_values;
    at += header_size + header->compressed_page_size;
  }
  ColumnValues out = decoder.Take();
  if (values != chunk.num_values) {
    return absl::InvalidArgumentError(
        absl::StrCat("its pages hold ", values, " values where the chunk says ", chunk.num_values));
  }
  return out;
}

}  // namespace rollout::parquet
