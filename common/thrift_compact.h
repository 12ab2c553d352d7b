// A reader of Thrift's compact protocol, the encoding of Parquet's footer and page
// headers (common/parquet_metadata.h). It walks the bytes as the caller asks for
// fields; it knows no schema, and skips what the caller does not want.
//
//   thrift::CompactReader in(bytes);
//   RETURN_IF_ERROR(in.BeginStruct());
//   for (;;) {
//     ASSIGN_OR_RETURN(thrift::Field field, in.NextField());
//     if (field.type == thrift::Type::kStop) break;
//     if (field.id == 1) { ASSIGN_OR_RETURN(int64_t v, in.ReadInt(field.type)); ... }
//     else RETURN_IF_ERROR(in.Skip(field.type));
//   }
//   RETURN_IF_ERROR(in.EndStruct());
//
// Every error is InvalidArgument naming the byte offset where the bytes stopped making
// sense; nothing reads past the end of the input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace rollout::thrift {

// The compact protocol's type codes.
enum class Type : uint8_t {
  kStop = 0,
  kBoolTrue = 1,
  kBoolFalse = 2,
  kByte = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
};

struct Field {
  Type type = Type::kStop;
  int16_t id = 0;
};

struct ListHeader {
  Type element_type = Type::kStop;
  int64_t size = 0;
};

class CompactReader {
 public:
  // Reads `bytes`, which must outlive the reader.
  explicit CompactReader(absl::string_view bytes) : bytes_(bytes) {}

  // Bytes consumed so far.
  size_t position() const { return position_; }

  // A struct's fields are read between BeginStruct and EndStruct; NextField gives
  // Type::kStop after the last one (EndStruct follows it).
  absl::Status BeginStruct();
  absl::StatusOr<Field> NextField();
  absl::Status EndStruct();

  // A field's value (or a list element's, given the list's element type).
  absl::StatusOr<int64_t> ReadInt(Type type);  // kByte, kI16, kI32, kI64
  absl::StatusOr<bool> ReadBool(Type type);    // a field's kBoolTrue/kBoolFalse
  absl::StatusOr<std::string> ReadBinary();
  absl::StatusOr<ListHeader> ReadListHeader();  // kList or kSet

  // Skips a value of `type`, nested ones included.
  absl::Status Skip(Type type);

 private:
  absl::StatusOr<uint64_t> ReadVarint();
  absl::StatusOr<uint8_t> ReadByte();
  absl::Status Error(absl::string_view what) const;
  // A boolean list element is a byte of its own; a boolean field is in its type code.
  absl::Status SkipNested(Type type, bool list_element, int depth);

  absl::string_view bytes_;
  size_t position_ = 0;
  std::vector<int16_t> last_field_ids_;  // one per open struct
};

}  // namespace rollout::thrift
