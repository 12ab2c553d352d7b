#include "common/thrift_compact.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace rollout::thrift {
namespace {

// Parquet's footers nest a handful of levels; anything deeper is corrupt input, and the
// bound keeps a hostile file from exhausting the stack.
constexpr int kMaxDepth = 64;

int64_t ZigZagDecode(uint64_t n) {
  return static_cast<int64_t>(n >> 1) ^ -static_cast<int64_t>(n & 1);
}

bool IsKnownType(uint8_t code) { return code <= static_cast<uint8_t>(Type::kStruct); }

}  // namespace

absl::Status CompactReader::Error(absl::string_view what) const {
  return absl::InvalidArgumentError(
      absl::StrCat("Thrift compact data: ", what, " at byte ", position_));
}

absl::StatusOr<uint8_t> CompactReader::ReadByte() {
  if (position_ >= bytes_.size()) return Error("unexpected end");
  return static_cast<uint8_t>(bytes_[position_++]);
}

absl::StatusOr<uint64_t> CompactReader::ReadVarint() {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    ASSIGN_OR_RETURN(const uint8_t byte, ReadByte());
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return value;
  }
  return Error("a varint longer than 10 bytes");
}

absl::Status CompactReader::BeginStruct() {
  if (last_field_ids_.size() >= kMaxDepth) return Error("structs nested too deep");
  last_field_ids_.push_back(0);
  return absl::OkStatus();
}

absl::Status CompactReader::EndStruct() {
  if (last_field_ids_.empty()) return Error("a struct ended that was not begun");
  last_field_ids_.pop_back();
  return absl::OkStatus();
}

absl::StatusOr<Field> CompactReader::NextField() {
  if (last_field_ids_.empty()) return Error("a field read outside a struct");
  ASSIGN_OR_RETURN(const uint8_t header, ReadByte());
  const uint8_t code = header & 0x0f;
  if (!IsKnownType(code)) return Error(absl::StrCat("unknown field type ", code));
  Field field;
  field.type = static_cast<Type>(code);
  if (field.type == Type::kStop) return field;
  const int delta = header >> 4;
  if (delta != 0) {
    field.id = static_cast<int16_t>(last_field_ids_.back() + delta);
  } else {
    ASSIGN_OR_RETURN(const uint64_t id, ReadVarint());
    field.id = static_cast<int16_t>(ZigZagDecode(id));
  }
  last_field_ids_.back() = field.id;
  return field;
}

absl::StatusOr<int64_t> CompactReader::ReadInt(Type type) {
  if (type == Type::kByte) {
    ASSIGN_OR_RETURN(const uint8_t byte, ReadByte());
    return static_cast<int8_t>(byte);
  }
  if (type != Type::kI16 && type != Type::kI32 && type != Type::kI64) {
    return Error(absl::StrCat("an integer expected, type ", static_cast<int>(type), " found"));
  }
  ASSIGN_OR_RETURN(const uint64_t raw, ReadVarint());
  return ZigZagDecode(raw);
}

absl::StatusOr<bool> CompactReader::ReadBool(Type type) {
  if (type == Type::kBoolTrue) return true;
  if (type == Type::kBoolFalse) return false;
  return Error(absl::StrCat("a boolean expected, type ", static_cast<int>(type), " found"));
}

absl::StatusOr<std::string> CompactReader::ReadBinary() {
  ASSIGN_OR_RETURN(const uint64_t size, ReadVarint());
  if (size > bytes_.size() - position_) {
    return Error(absl::StrCat("a string of ", size, " bytes runs past the end"));
  }
  std::string value(bytes_.substr(position_, size));
  position_ += size;
  return value;
}

absl::StatusOr<ListHeader> CompactReader::ReadListHeader() {
  ASSIGN_OR_RETURN(const uint8_t header, ReadByte());
  const uint8_t code = header & 0x0f;
  if (!IsKnownType(code) || code == 0) return Error(absl::StrCat("list of unknown type ", code));
  ListHeader list;
  list.element_type = static_cast<Type>(code);
  list.size = header >> 4;
  if (list.size == 15) {
    ASSIGN_OR_RETURN(const uint64_t size, ReadVarint());
    // Every element takes at least a byte, except booleans in fields — not in lists.
    if (size > bytes_.size() - position_) {
      return Error(absl::StrCat("a list of ", size, " elements runs past the end"));
    }
    list.size = static_cast<int64_t>(size);
  }
  return list;
}

absl::Status CompactReader::Skip(Type type) { return SkipNested(type, false, 0); }

absl::Status CompactReader::SkipNested(Type type, bool list_element, int depth) {
  if (depth > kMaxDepth) return Error("values nested too deep");
  switch (type) {
    case Type::kBoolTrue:
    case Type::kBoolFalse:
      if (list_element) return ReadByte().status();
      return absl::OkStatus();
    case Type::kByte:
      return ReadByte().status();
    case Type::kI16:
    case Type::kI32:
    case Type::kI64:
      return ReadVarint().status();
    case Type::kDouble:
      if (bytes_.size() - position_ < 8) return Error("a double runs past the end");
      position_ += 8;
      return absl::OkStatus();
    case Type::kBinary:
      return ReadBinary().status();
    case Type::kList:
    case Type::kSet: {
      ASSIGN_OR_RETURN(const ListHeader list, ReadListHeader());
      for (int64_t i = 0; i < list.size; ++i) {
        RETURN_IF_ERROR(SkipNested(list.element_type, true, depth + 1));
      }
      return absl::OkStatus();
    }
    case Type::kMap: {
      ASSIGN_OR_RETURN(const uint64_t size, ReadVarint());
      if (size == 0) return absl::OkStatus();
      if (size > bytes_.size() - position_) return Error("a map runs past the end");
      ASSIGN_OR_RETURN(const uint8_t types, ReadByte());
      if (!IsKnownType(types >> 4) || !IsKnownType(types & 0x0f)) return Error("a map of unknown types");
      for (uint64_t i = 0; i < size; ++i) {
        RETURN_IF_ERROR(SkipNested(static_cast<Type>(types >> 4), true, depth + 1));
        RETURN_IF_ERROR(SkipNested(static_cast<Type>(types & 0x0f), true, depth + 1));
      }
      return absl::OkStatus();
    }
    case Type::kStruct: {
      RETURN_IF_ERROR(BeginStruct());
      for (;;) {
        ASSIGN_OR_RETURN(const Field field, NextField());
        if (field.type == Type::kStop) break;
        RETURN_IF_ERROR(SkipNested(field.type, false, depth + 1));
      }
      return EndStruct();
    }
    case Type::kStop:
      break;
  }
  return Error(absl::StrCat("cannot skip a value of type ", static_cast<int>(type)));
}

}  // namespace rollout::thrift
