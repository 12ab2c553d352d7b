#include "common/parquet_encodings.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace rollout::parquet {
namespace {

absl::Status Truncated(absl::string_view what, int64_t decoded, int64_t count) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, " end after ", decoded, " of ", count, " values"));
}

template <typename T>
T LoadLittleEndian(const char* at) {
  T value;
  std::memcpy(&value, at, sizeof(T));  // x86-64 and aarch64 are little-endian
  return value;
}

}  // namespace

absl::Status DecodeRleHybrid(absl::string_view data, int bit_width, int64_t count,
                             std::vector<uint32_t>* out) {
  if (bit_width < 0 || bit_width > 32) {
    return absl::InvalidArgumentError(absl::StrCat("a bit width of ", bit_width));
  }
  const size_t value_bytes = (bit_width + 7) / 8;
  size_t at = 0;
  int64_t decoded = 0;
  while (decoded < count) {
    uint64_t header = 0;
    for (int shift = 0;; shift += 7) {
      if (at >= data.size() || shift > 35) return Truncated("RLE/bit-packed levels or indices", decoded, count);
      const uint8_t byte = static_cast<uint8_t>(data[at++]);
      header |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
    }
    if ((header & 1) == 0) {  // a run of one value repeated
      const int64_t run = static_cast<int64_t>(header >> 1);
      if (data.size() - at < value_bytes) return Truncated("RLE/bit-packed levels or indices", decoded, count);
      uint32_t value = 0;
      for (size_t i = 0; i < value_bytes; ++i) value |= static_cast<uint32_t>(static_cast<uint8_t>(data[at + i])) << (8 * i);
      at += value_bytes;
      const int64_t take = std::min(run, count - decoded);
      out->insert(out->end(), take, value);
      decoded += take;
      continue;
    }
    // Groups of 8 values, `bit_width` bytes a group, least significant bit first. A
    // writer may leave out the bytes of the last group's values past `count`.
    const uint64_t groups = header >> 1;
    const int64_t take = static_cast<int64_t>(std::min<uint64_t>(groups * 8, count - decoded));
    if ((static_cast<uint64_t>(take) * bit_width + 7) / 8 > data.size() - at) {
      return Truncated("RLE/bit-packed levels or indices", decoded, count);
    }
    const uint64_t mask = bit_width == 32 ? 0xffffffffULL : (1ULL << bit_width) - 1;
    for (int64_t i = 0; i < take; ++i) {
      const uint64_t bit = static_cast<uint64_t>(i) * bit_width;
      const size_t first = at + bit / 8;
      const size_t last = std::min<size_t>(at + (bit + bit_width + 7) / 8, data.size());
      uint64_t window = 0;
      for (size_t b = first; b < last; ++b) {
        window |= static_cast<uint64_t>(static_cast<uint8_t>(data[b])) << (8 * (b - first));
      }
      out->push_back(static_cast<uint32_t>((window >> (bit % 8)) & mask));
    }
    decoded += take;
    at += std::min<uint64_t>(groups * bit_width, data.size() - at);
  }
  return absl::OkStatus();
}

absl::Status DecodePlain(absl::string_view data, PhysicalType type, Annotation annotation,
                         int64_t count, std::vector<nlohmann::json>* out) {
  const bool is_unsigned = annotation == Annotation::kUnsignedInt;
  const char* at = data.data();
  const char* const end = data.data() + data.size();
  auto fixed = [&](size_t width, auto&& append) -> absl::Status {
    if (static_cast<size_t>(end - at) / width < static_cast<size_t>(count)) {
      return Truncated(absl::StrCat("PLAIN ", PhysicalTypeName(type)), (end - at) / width, count);
    }
    for (int64_t i = 0; i < count; ++i, at += width) append(at);
    return absl::OkStatus();
  };
  switch (type) {
    case PhysicalType::kBoolean:
      if (static_cast<size_t>(end - at) * 8 < static_cast<size_t>(count)) {
        return Truncated("PLAIN BOOLEAN", (end - at) * 8, count);
      }
      for (int64_t i = 0; i < count; ++i) out->push_back(((static_cast<uint8_t>(at[i / 8]) >> (i % 8)) & 1) != 0);
      return absl::OkStatus();
    case PhysicalType::kInt32:
      return fixed(4, [&](const char* p) {
        const int32_t v = LoadLittleEndian<int32_t>(p);
        out->push_back(is_unsigned ? nlohmann::json(static_cast<uint32_t>(v)) : nlohmann::json(v));
      });
    case PhysicalType::kInt64:
      return fixed(8, [&](const char* p) {
        const int64_t v = LoadLittleEndian<int64_t>(p);
        out->push_back(is_unsigned ? nlohmann::json(static_cast<uint64_t>(v)) : nlohmann::json(v));
      });
    case PhysicalType::kFloat:
      return fixed(4, [&](const char* p) { out->push_back(static_cast<double>(LoadLittleEndian<float>(p))); });
    case PhysicalType::kDouble:
      return fixed(8, [&](const char* p) { out->push_back(LoadLittleEndian<double>(p)); });
    case PhysicalType::kByteArray:
      for (int64_t i = 0; i < count; ++i) {
        if (end - at < 4) return Truncated("PLAIN BYTE_ARRAY", i, count);
        const uint32_t length = LoadLittleEndian<uint32_t>(at);
        at += 4;
        if (static_cast<size_t>(end - at) < length) return Truncated("PLAIN BYTE_ARRAY", i, count);
        const absl::string_view text(at, length);
        if (!IsValidUtf8(text)) {
          return absl::InvalidArgumentError(absl::StrCat("value ", i, " of a page is not UTF-8 text"));
        }
        out->push_back(std::string(text));
        at += length;
      }
      return absl::OkStatus();
    case PhysicalType::kInt96:
    case PhysicalType::kFixedLenByteArray:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat("PLAIN ", PhysicalTypeName(type), " is not read"));
}

bool IsValidUtf8(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const uint8_t lead = static_cast<uint8_t>(text[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    int extra;
    uint32_t code, min;
    if ((lead & 0xe0) == 0xc0) extra = 1, code = lead & 0x1f, min = 0x80;
    else if ((lead & 0xf0) == 0xe0) extra = 2, code = lead & 0x0f, min = 0x800;
    else if ((lead & 0xf8) == 0xf0) extra = 3, code = lead & 0x07, min = 0x10000;
    else return false;
    if (text.size() - i <= static_cast<size_t>(extra)) return false;
    for (int k = 1; k <= extra; ++k) {
      const uint8_t next = static_cast<uint8_t>(text[i + k]);
      if ((next & 0xc0) != 0x80) return false;
      code = (code << 6) | (next & 0x3f);
    }
    if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return false;
    i += extra + 1;
  }
  return true;
}

}  // namespace rollout::parquet
