#include "common/recipe_values.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/edit_distance.h"
#include "proto/schema_options.pb.h"

namespace rollout::config {

using google::protobuf::EnumValueDescriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

namespace {

std::string Quoted(const std::string& text) { return absl::StrCat("'", text, "'"); }

absl::Status WrongType(const std::string& key, const std::string& where, absl::string_view expected,
                       const std::string& text) {
  return absl::InvalidArgumentError(absl::StrCat("wrong type for '", key, "' ", where,
                                                 ": expected ", expected, ", got '", text, "'"));
}

bool ParseBool(const std::string& text, bool* out) {
  const std::string lower = absl::AsciiStrToLower(text);
  if (lower == "true" || lower == "yes") {
    *out = true;
  } else if (lower == "false" || lower == "no") {
    *out = false;
  } else {
    return false;
  }
  return true;
}

// Whole numbers only; one out of the type's range is reported against that range.
// (uint64 values above the int64 range are rejected: the schema has none.)
absl::Status ParseInteger(const FieldDescriptor* field, const std::string& text,
                          const std::string& key, const std::string& where, int64_t* out) {
  double low = std::numeric_limits<int64_t>::min(), high = std::numeric_limits<int64_t>::max();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      low = std::numeric_limits<int32_t>::min();
      high = std::numeric_limits<int32_t>::max();
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      low = 0;
      high = std::numeric_limits<uint32_t>::max();
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      low = 0;
      break;
    default:
      break;
  }
  const bool whole = absl::SimpleAtoi(text, out);
  double value = 0;
  if (!whole) {
    // All digits but unparsable as int64: out of range, reported below.
    const std::string digits(absl::StripLeadingAsciiWhitespace(text));
    const size_t start = !digits.empty() && (digits[0] == '-' || digits[0] == '+') ? 1 : 0;
    if (digits.size() == start ||
        digits.find_first_not_of("0123456789", start) != std::string::npos ||
        !absl::SimpleAtod(digits, &value)) {
      return WrongType(key, where, ExpectedValue(field), text);
    }
  } else {
    value = static_cast<double>(*out);
  }
  const std::string shown =
      whole ? absl::StrCat(*out) : std::string(absl::StripAsciiWhitespace(text));
  if (value < low) {
    return absl::InvalidArgumentError(
        absl::StrCat(Quoted(key), " ", where, " must be >= ", FormatDouble(low), ", got ", shown));
  }
  if (value > high || !whole) {
    return absl::InvalidArgumentError(
        absl::StrCat(Quoted(key), " ", where, " must be <= ", FormatDouble(high), ", got ", shown));
  }
  return absl::OkStatus();
}

absl::Status ParseNumber(const FieldDescriptor* field, const std::string& text,
                         const std::string& key, const std::string& where, double* out) {
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT) {
    float value = 0;
    if (!absl::SimpleAtof(text, &value) || !std::isfinite(value)) {
      return WrongType(key, where, "a finite 32-bit number", text);
    }
    *out = value;
    return absl::OkStatus();
  }
  if (!absl::SimpleAtod(text, out) || !std::isfinite(*out)) {
    return WrongType(key, where, ExpectedValue(field), text);
  }
  return absl::OkStatus();
}

// Sets a singular field or appends to a repeated one.
void Store(Message* message, const FieldDescriptor* field, int64_t value) {
  const Reflection* reflection = message->GetReflection();
  const bool repeated = field->is_repeated();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      repeated ? reflection->AddInt32(message, field, static_cast<int32_t>(value))
               : reflection->SetInt32(message, field, static_cast<int32_t>(value));
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      repeated ? reflection->AddUInt32(message, field, static_cast<uint32_t>(value))
               : reflection->SetUInt32(message, field, static_cast<uint32_t>(value));
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      repeated ? reflection->AddUInt64(message, field, static_cast<uint64_t>(value))
               : reflection->SetUInt64(message, field, static_cast<uint64_t>(value));
      break;
    default:
      repeated ? reflection->AddInt64(message, field, value)
               : reflection->SetInt64(message, field, value);
  }
}

void Store(Message* message, const FieldDescriptor* field, double value) {
  const Reflection* reflection = message->GetReflection();
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT) {
    const float narrow = static_cast<float>(value);
    field->is_repeated() ? reflection->AddFloat(message, field, narrow)
                         : reflection->SetFloat(message, field, narrow);
  } else {
    field->is_repeated() ? reflection->AddDouble(message, field, value)
                         : reflection->SetDouble(message, field, value);
  }
}

void Store(Message* message, const FieldDescriptor* field, bool value) {
  field->is_repeated() ? message->GetReflection()->AddBool(message, field, value)
                       : message->GetReflection()->SetBool(message, field, value);
}

void Store(Message* message, const FieldDescriptor* field, const std::string& value) {
  field->is_repeated() ? message->GetReflection()->AddString(message, field, value)
                       : message->GetReflection()->SetString(message, field, value);
}

void Store(Message* message, const FieldDescriptor* field, const EnumValueDescriptor* value) {
  field->is_repeated() ? message->GetReflection()->AddEnum(message, field, value)
                       : message->GetReflection()->SetEnum(message, field, value);
}

}  // namespace

std::string ExpectedValue(const FieldDescriptor* field) {
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_BOOL:
      return "true or false";
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64:
      return "an integer";
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT:
      return "a number";
    case FieldDescriptor::CPPTYPE_STRING:
      return "a string";
    case FieldDescriptor::CPPTYPE_ENUM: {
      std::vector<std::string> names;
      for (int i = 0; i < field->enum_type()->value_count(); ++i) {
        names.push_back(field->enum_type()->value(i)->name());
      }
      return "one of " + absl::StrJoin(names, "|");
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return "a map of keys";
}

absl::Status CheckBounds(const FieldDescriptor* field, double value, const std::string& key,
                         const std::string& where) {
  const google::protobuf::FieldOptions& options = field->options();
  const char* violated = nullptr;
  double bound = 0;
  if (options.HasExtension(min) && !(value >= options.GetExtension(min))) {
    violated = ">=";
    bound = options.GetExtension(min);
  } else if (options.HasExtension(greater_than) && !(value > options.GetExtension(greater_than))) {
    violated = ">";
    bound = options.GetExtension(greater_than);
  } else if (options.HasExtension(max) && !(value <= options.GetExtension(max))) {
    violated = "<=";
    bound = options.GetExtension(max);
  }
  if (violated == nullptr) return absl::OkStatus();
  const bool integral = field->cpp_type() != FieldDescriptor::CPPTYPE_DOUBLE &&
                        field->cpp_type() != FieldDescriptor::CPPTYPE_FLOAT;
  const std::string shown =
      integral ? absl::StrCat(static_cast<int64_t>(value)) : FormatDouble(value);
  return absl::InvalidArgumentError(absl::StrCat(Quoted(key), " ", where, " must be ", violated,
                                                 " ", FormatDouble(bound), ", got ", shown));
}

absl::Status CheckChoice(const FieldDescriptor* field, const std::string& value,
                         const std::string& key, const std::string& where) {
  const google::protobuf::FieldOptions& options = field->options();
  if (!options.HasExtension(choices)) return absl::OkStatus();
  const std::string& allowed_text = options.GetExtension(choices);
  const std::vector<std::string> allowed = absl::StrSplit(allowed_text, '|');
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return absl::OkStatus();
  if (value.empty() && !field->is_repeated() && field->default_value_string().empty()) {
    return absl::OkStatus();
  }
  std::string message = absl::StrCat(Quoted(key), " ", where, " must be one of ", allowed_text,
                                     "; got ", Quoted(value));
  const std::string suggestion = ClosestMatch(value, allowed);
  if (!suggestion.empty())
    absl::StrAppend(&message, " ", kEmDash, " did you mean ", Quoted(suggestion), "?");
  return absl::InvalidArgumentError(message);
}

absl::Status SetScalarFromText(Message* message, const FieldDescriptor* field,
                               const std::string& text, const std::string& key,
                               const std::string& where) {
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_BOOL: {
      bool value = false;
      if (!ParseBool(text, &value)) return WrongType(key, where, ExpectedValue(field), text);
      Store(message, field, value);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64: {
      int64_t value = 0;
      absl::Status parsed = ParseInteger(field, text, key, where, &value);
      if (parsed.ok()) parsed = CheckBounds(field, static_cast<double>(value), key, where);
      if (parsed.ok()) Store(message, field, value);
      return parsed;
    }
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: {
      double value = 0;
      absl::Status parsed = ParseNumber(field, text, key, where, &value);
      if (parsed.ok()) parsed = CheckBounds(field, value, key, where);
      if (parsed.ok()) Store(message, field, value);
      return parsed;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      if (!absl::StrContains(text, "${")) {
        absl::Status allowed = CheckChoice(field, text, key, where);
        if (!allowed.ok()) return allowed;
      }
      Store(message, field, text);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      const EnumValueDescriptor* value = field->enum_type()->FindValueByName(text);
      if (value == nullptr) return WrongType(key, where, ExpectedValue(field), text);
      Store(message, field, value);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return absl::InternalError(absl::StrCat("'", key, "' is not a scalar field"));
}

std::string FormatDouble(double value) {
  char buffer[64];
  const std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

std::string ScalarText(const Message& message, const FieldDescriptor* field, int index) {
  const Reflection* reflection = message.GetReflection();
  const bool repeated = field->is_repeated();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_BOOL: {
      const bool value = repeated ? reflection->GetRepeatedBool(message, field, index)
                                  : reflection->GetBool(message, field);
      return value ? "true" : "false";
    }
    case FieldDescriptor::CPPTYPE_INT32:
      return absl::StrCat(repeated ? reflection->GetRepeatedInt32(message, field, index)
                                   : reflection->GetInt32(message, field));
    case FieldDescriptor::CPPTYPE_INT64:
      return absl::StrCat(repeated ? reflection->GetRepeatedInt64(message, field, index)
                                   : reflection->GetInt64(message, field));
    case FieldDescriptor::CPPTYPE_UINT32:
      return absl::StrCat(repeated ? reflection->GetRepeatedUInt32(message, field, index)
                                   : reflection->GetUInt32(message, field));
    case FieldDescriptor::CPPTYPE_UINT64:
      return absl::StrCat(repeated ? reflection->GetRepeatedUInt64(message, field, index)
                                   : reflection->GetUInt64(message, field));
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return FormatDouble(repeated ? reflection->GetRepeatedDouble(message, field, index)
                                   : reflection->GetDouble(message, field));
    case FieldDescriptor::CPPTYPE_FLOAT: {
      const float value = repeated ? reflection->GetRepeatedFloat(message, field, index)
                                   : reflection->GetFloat(message, field);
      char buffer[64];
      const std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), value);
      return std::string(buffer, result.ptr);
    }
    case FieldDescriptor::CPPTYPE_STRING:
      return repeated ? reflection->GetRepeatedString(message, field, index)
                      : reflection->GetString(message, field);
    case FieldDescriptor::CPPTYPE_ENUM:
      return (repeated ? reflection->GetRepeatedEnum(message, field, index)
                       : reflection->GetEnum(message, field))
          ->name();
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return "";
}
}  // namespace rollout::config
