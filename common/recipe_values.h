// Internal to the recipe loader (common/recipe_loader.h): scalar values of recipe
// keys, read from and written as YAML scalar text and checked against the field's
// type and options (schema_options.proto). Keys and `where` phrases as in
// common/recipe_schema.h.
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <string>

#include "absl/status/status.h"

namespace rollout::config {

// What a value of the (non-message) field looks like: "an integer", "a number",
// "true or false", "a string", "one of A|B".
std::string ExpectedValue(const google::protobuf::FieldDescriptor* field);

// (min), (max), (greater_than): "'<key>' <where> must be >= 1, got 0".
absl::Status CheckBounds(const google::protobuf::FieldDescriptor* field, double value,
                         const std::string& key, const std::string& where);

// (choices): "'<key>' <where> must be one of a|b; got 'c' — did you mean 'a'?".
absl::Status CheckChoice(const google::protobuf::FieldDescriptor* field, const std::string& value,
                         const std::string& key, const std::string& where);

// Parses YAML scalar `text` as the (non-message) field's type, checks it against the
// field's options and sets it (singular) or appends it (repeated). A string holding
// a `${...}` reference is checked against (choices) only once resolved.
absl::Status SetScalarFromText(google::protobuf::Message* message,
                               const google::protobuf::FieldDescriptor* field,
                               const std::string& text, const std::string& key,
                               const std::string& where);

// The value of a singular scalar field (its default when unset), or element `index`
// of a repeated one, as YAML scalar text that SetScalarFromText reads back exactly.
std::string ScalarText(const google::protobuf::Message& message,
                       const google::protobuf::FieldDescriptor* field, int index = -1);

// Shortest text that parses back to exactly `value` ("1e-06", "0.1", "16").
std::string FormatDouble(double value);

}  // namespace rollout::config
