#include "common/snappy.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace rollout::snappy {
namespace {

absl::Status Corrupt(absl::string_view what, size_t offset) {
  return absl::InvalidArgumentError(absl::StrCat("Snappy data: ", what, " at byte ", offset));
}

// A little-endian integer of `bytes` (1-4) bytes at `in[at]`; the caller checked the size.
uint32_t LoadLittleEndian(absl::string_view in, size_t at, int bytes) {
  uint32_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= static_cast<uint32_t>(static_cast<uint8_t>(in[at + i])) << (8 * i);
  return value;
}

}  // namespace

absl::StatusOr<std::string> Decompress(absl::string_view in) {
  size_t at = 0;
  uint64_t declared = 0;
  for (int shift = 0;; shift += 7) {
    if (at >= in.size() || shift > 28) return Corrupt("a bad length preamble", at);
    const uint8_t byte = static_cast<uint8_t>(in[at++]);
    declared |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) break;
  }
  if (declared > 32 * static_cast<uint64_t>(in.size())) {
    return Corrupt(absl::StrCat("a declared length of ", declared, " bytes from ", in.size()), 0);
  }
  std::string out;
  out.reserve(declared);
  while (at < in.size()) {
    const size_t element = at;
    const uint8_t tag = static_cast<uint8_t>(in[at++]);
    size_t length = 0, offset = 0;
    switch (tag & 3) {
      case 0: {  // literal: the length - 1 in the tag, or in the 1-4 bytes after it
        length = tag >> 2;
        if (length >= 60) {
          const int bytes = static_cast<int>(length) - 59;
          if (in.size() - at < static_cast<size_t>(bytes)) return Corrupt("a truncated literal length", element);
          length = LoadLittleEndian(in, at, bytes);
          at += bytes;
        }
        length += 1;
        if (in.size() - at < length) return Corrupt("a truncated literal", element);
        if (out.size() + length > declared) return Corrupt("output past the declared length", element);
        out.append(in.data() + at, length);
        at += length;
        continue;
      }
      case 1:  // copy: length 4-11, an 11-bit offset
        if (at >= in.size()) return Corrupt("a truncated copy", element);
        length = 4 + ((tag >> 2) & 7);
        offset = (static_cast<size_t>(tag >> 5) << 8) | static_cast<uint8_t>(in[at++]);
        break;
      case 2:  // copy: length 1-64, a 16-bit offset
      case 3: {  // copy: length 1-64, a 32-bit offset
        const int bytes = (tag & 3) == 2 ? 2 : 4;
        if (in.size() - at < static_cast<size_t>(bytes)) return Corrupt("a truncated copy", element);
        length = 1 + (tag >> 2);
        offset = LoadLittleEndian(in, at, bytes);
        at += bytes;
        break;
      }
    }
    if (offset == 0 || offset > out.size()) return Corrupt("a copy from before the start", element);
    if (out.size() + length > declared) return Corrupt("output past the declared length", element);
    // Byte by byte: a copy may overlap the bytes it appends (offset < length).
    for (size_t from = out.size() - offset, i = 0; i < length; ++i) out.push_back(out[from + i]);
  }
  if (out.size() != declared) {
    return Corrupt(absl::StrCat("output of ", out.size(), " bytes where ", declared, " were declared"),
                   in.size());
  }
  return out;
}

}  // namespace rollout::snappy
