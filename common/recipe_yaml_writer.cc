// RecipeToYaml (declared in common/recipe_loader.h).
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "common/recipe_loader.h"
#include "common/recipe_schema.h"
#include "common/recipe_values.h"

namespace rollout::config {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

void EmitMessage(const Message& message, YAML::Emitter* out);

// Strings go through the emitter, which quotes them where YAML needs it (`""`,
// `"null"`, `": "`); other scalars are already plain text that reads back exactly.
void EmitScalar(const Message& message, const FieldDescriptor* field, int index,
                YAML::Emitter* out) {
  *out << ScalarText(message, field, index);
}

void EmitValue(const Message& message, const FieldDescriptor* field, YAML::Emitter* out) {
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    EmitMessage(message.GetReflection()->GetMessage(message, field), out);
  } else {
    EmitScalar(message, field, -1, out);
  }
}

// Entries sorted by name, each printed in full.
void EmitMap(const Message& message, const FieldDescriptor* field, YAML::Emitter* out) {
  const Reflection* reflection = message.GetReflection();
  const FieldDescriptor* key_field = field->message_type()->map_key();
  const FieldDescriptor* value_field = field->message_type()->map_value();
  std::vector<std::pair<std::string, const Message*>> entries;
  for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
    const Message& entry = reflection->GetRepeatedMessage(message, field, i);
    entries.emplace_back(ScalarText(entry, key_field), &entry);
  }
  std::sort(entries.begin(), entries.end());
  if (entries.empty()) *out << YAML::Flow;
  *out << YAML::BeginMap;
  for (const auto& [name, entry] : entries) {
    *out << YAML::Key << name << YAML::Value;
    EmitValue(*entry, value_field, out);
  }
  *out << YAML::EndMap;
}

// Scalar lists in flow style (`[model, optimizer]`); an empty list with a
// (default_list) prints that default, which is what it reads as.
void EmitList(const Message& message, const FieldDescriptor* field, YAML::Emitter* out) {
  const Reflection* reflection = message.GetReflection();
  const int size = reflection->FieldSize(message, field);
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    if (size == 0) *out << YAML::Flow;
    *out << YAML::BeginSeq;
    for (int i = 0; i < size; ++i)
      EmitMessage(reflection->GetRepeatedMessage(message, field, i), out);
    *out << YAML::EndSeq;
    return;
  }
  *out << YAML::Flow << YAML::BeginSeq;
  if (size == 0) {
    for (const std::string& element : DefaultList(field)) *out << element;
  }
  for (int i = 0; i < size; ++i) EmitScalar(message, field, i, out);
  *out << YAML::EndSeq;
}

// A scalar key the recipe left unset whose schema has no default (actor.data_loader_seed,
// optim.lr_decay_style): printed as null, which reads back as unset, so that whether it
// was set survives (common/lr_schedule_family.h; the seed then follows trainer.seed).
bool IsUnsetWithoutDefault(const Message& message, const FieldDescriptor* field) {
  return field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE && !field->has_default_value() &&
         NullValue(field) == nullptr && !message.GetReflection()->HasField(message, field);
}

void EmitMessage(const Message& message, YAML::Emitter* out) {
  const google::protobuf::Descriptor* type = message.GetDescriptor();
  if (type->field_count() == 0) *out << YAML::Flow;
  *out << YAML::BeginMap;
  for (int i = 0; i < type->field_count(); ++i) {
    const FieldDescriptor* field = type->field(i);
    *out << YAML::Key << field->name() << YAML::Value;
    if (field->is_map()) {
      EmitMap(message, field, out);
    } else if (field->is_repeated()) {
      EmitList(message, field, out);
    } else if (IsUnsetWithoutDefault(message, field)) {
      *out << YAML::Null;
    } else {
      EmitValue(message, field, out);
    }
  }
  *out << YAML::EndMap;
}

}  // namespace

std::string RecipeToYaml(const Recipe& recipe) {
  YAML::Emitter out;
  out.SetNullFormat(YAML::LowerNull);
  EmitMessage(recipe, &out);
  return std::string(out.c_str()) + "\n";
}

}  // namespace rollout::config
