#include "common/recipe_apply.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/recipe_schema.h"
#include "common/recipe_values.h"
#include "common/status_macros.h"

namespace rollout::config {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

std::string LayerOrigin::Location(const YAML::Mark& mark) const {
  if (!override_text.empty()) return absl::StrCat("command line '", override_text, "'");
  if (mark.is_null()) return file;
  return absl::StrCat(file, ":", mark.line + 1);
}

namespace {

std::string Join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : absl::StrCat(prefix, ".", name);
}

std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return absl::StrCat("'", node.Scalar(), "'");
    default:
      return "null";
  }
}

class LayerApplier {
 public:
  LayerApplier(const LayerOrigin& origin, std::map<std::string, std::string>* sources)
      : origin_(origin), sources_(sources) {}

  // `map`'s keys are fields of `message`, whose own key is `prefix` ("" at the top).
  absl::Status ApplyMap(const YAML::Node& map, Message* message, const std::string& prefix);

 private:
  absl::Status ApplyVerlGroup(const YAML::Node& group, const YAML::Mark& mark, Message* recipe);
  absl::Status ApplyField(const YAML::Node& value, const YAML::Mark& mark, Message* message,
                          const FieldDescriptor* field, const std::string& key);
  absl::Status ApplyMapField(const YAML::Node& value, const YAML::Mark& mark, Message* message,
                             const FieldDescriptor* field, const std::string& key);
  absl::Status ApplyList(const YAML::Node& value, const YAML::Mark& mark, Message* message,
                         const FieldDescriptor* field, const std::string& key);
  absl::Status CheckKey(const YAML::Node& key_node, const std::string& prefix,
                        std::map<std::string, int>* seen_lines) const;
  absl::Status WrongType(const std::string& key, const YAML::Mark& mark,
                         const std::string& expected, const YAML::Node& got) const;
  // Erases `key` and every key under it from the sources.
  void Forget(const std::string& key);
  std::string Where(const YAML::Mark& mark) const { return "at " + origin_.Location(mark); }

  const LayerOrigin& origin_;
  std::map<std::string, std::string>* sources_;
};

absl::Status LayerApplier::ApplyMap(const YAML::Node& map, Message* message,
                                    const std::string& prefix) {
  const bool top = prefix.empty() && message->GetDescriptor() == Recipe::descriptor();
  std::map<std::string, int> seen_lines;
  for (const auto& entry : map) {
    RETURN_IF_ERROR(CheckKey(entry.first, prefix, &seen_lines));
    const std::string& name = entry.first.Scalar();
    const YAML::Mark mark = entry.first.Mark();
    if (top && name == "extends") {
      if (origin_.extends_followed) continue;
      return absl::InvalidArgumentError(
          absl::StrCat("'extends' ", Where(mark), " is only allowed at the top of a recipe file"));
    }
    if (top && name == kVerlGroup) {
      RETURN_IF_ERROR(ApplyVerlGroup(entry.second, mark, message));
      continue;
    }
    const FieldDescriptor* field = FindRecipeField(message->GetDescriptor(), name);
    if (field == nullptr) {
      return UnknownKeyError(prefix, name, FieldNames(message->GetDescriptor()), Where(mark));
    }
    RETURN_IF_ERROR(ApplyField(entry.second, mark, message, field, Join(prefix, name)));
  }
  return absl::OkStatus();
}

// verl's nested form: `actor_rollout_ref: {actor: ..., rollout: ..., ref: ..., model: ...}`.
absl::Status LayerApplier::ApplyVerlGroup(const YAML::Node& group, const YAML::Mark& mark,
                                          Message* recipe) {
  if (group.IsNull()) {
    const YAML::Node reset(YAML::NodeType::Null);
    for (const char* child : {"actor", "rollout", "ref"}) {
      const FieldDescriptor* field = FindRecipeField(recipe->GetDescriptor(), child);
      RETURN_IF_ERROR(ApplyField(reset, mark, recipe, field, child));
    }
    return absl::OkStatus();
  }
  if (!group.IsMap()) return WrongType(kVerlGroup, mark, "a map of keys", group);
  std::map<std::string, int> seen_lines;
  for (const auto& entry : group) {
    RETURN_IF_ERROR(CheckKey(entry.first, kVerlGroup, &seen_lines));
    const std::string key = VerlChildKey(entry.first.Scalar());
    if (key.empty()) {
      return UnknownKeyError(kVerlGroup, entry.first.Scalar(), VerlChildren(),
                             Where(entry.first.Mark()));
    }
    // Walk to the canonical field: "actor.model" is field model of recipe.actor.
    Message* message = recipe;
    const std::vector<std::string> segments = absl::StrSplit(key, '.');
    for (size_t i = 0; i + 1 < segments.size(); ++i) {
      const FieldDescriptor* field = FindRecipeField(message->GetDescriptor(), segments[i]);
      message = message->GetReflection()->MutableMessage(message, field);
    }
    const FieldDescriptor* field = FindRecipeField(message->GetDescriptor(), segments.back());
    RETURN_IF_ERROR(ApplyField(entry.second, entry.first.Mark(), message, field, key));
  }
  return absl::OkStatus();
}

absl::Status LayerApplier::ApplyField(const YAML::Node& value, const YAML::Mark& mark,
                                      Message* message, const FieldDescriptor* field,
                                      const std::string& key) {
  const Reflection* reflection = message->GetReflection();
  if (value.IsNull()) {
    reflection->ClearField(message, field);
    Forget(key);
    return absl::OkStatus();
  }
  if (field->is_map()) return ApplyMapField(value, mark, message, field, key);
  if (field->is_repeated()) return ApplyList(value, mark, message, field, key);
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    if (!value.IsMap()) return WrongType(key, mark, "a map of keys", value);
    return ApplyMap(value, reflection->MutableMessage(message, field), key);
  }
  if (!value.IsScalar()) return WrongType(key, mark, ExpectedValue(field), value);
  RETURN_IF_ERROR(SetScalarFromText(message, field, value.Scalar(), key, Where(mark)));
  (*sources_)[key] = origin_.Location(mark);
  return absl::OkStatus();
}

// A map field (`resource_pools`) merges entry by entry; a null entry removes it.
absl::Status LayerApplier::ApplyMapField(const YAML::Node& value, const YAML::Mark& mark,
                                         Message* message, const FieldDescriptor* field,
                                         const std::string& key) {
  if (!value.IsMap()) return WrongType(key, mark, "a map of named entries", value);
  const Reflection* reflection = message->GetReflection();
  const FieldDescriptor* key_field = field->message_type()->map_key();
  const FieldDescriptor* value_field = field->message_type()->map_value();
  std::map<std::string, int> seen_lines;
  for (const auto& entry : value) {
    RETURN_IF_ERROR(CheckKey(entry.first, key, &seen_lines));
    const std::string& name = entry.first.Scalar();
    const std::string entry_key = Join(key, name);
    const YAML::Mark entry_mark = entry.first.Mark();
    int index = reflection->FieldSize(*message, field) - 1;
    while (index >= 0 &&
           ScalarText(reflection->GetRepeatedMessage(*message, field, index), key_field) != name) {
      --index;
    }
    if (entry.second.IsNull()) {
      if (index >= 0) {
        reflection->SwapElements(message, field, index, reflection->FieldSize(*message, field) - 1);
        reflection->RemoveLast(message, field);
      }
      Forget(entry_key);
      continue;
    }
    Message* map_entry = nullptr;
    if (index >= 0) {
      map_entry = reflection->MutableRepeatedMessage(message, field, index);
    } else {
      map_entry = reflection->AddMessage(message, field);
      RETURN_IF_ERROR(SetScalarFromText(map_entry, key_field, name, entry_key, Where(entry_mark)));
    }
    RETURN_IF_ERROR(ApplyField(entry.second, entry_mark, map_entry, value_field, entry_key));
    (*sources_)[entry_key] = origin_.Location(entry_mark);
  }
  return absl::OkStatus();
}

// A list replaces the previous one; a single scalar is a list of one.
absl::Status LayerApplier::ApplyList(const YAML::Node& value, const YAML::Mark& mark,
                                     Message* message, const FieldDescriptor* field,
                                     const std::string& key) {
  const bool of_messages = field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
  std::vector<YAML::Node> elements;
  if (value.IsSequence()) {
    for (const YAML::Node& element : value) elements.push_back(element);
  } else if (value.IsScalar() && !of_messages) {
    elements.push_back(value);
  } else {
    return WrongType(key, mark, of_messages ? "a list of maps" : "a list", value);
  }
  const std::vector<std::string> defaults = DefaultList(field);
  if (elements.empty() && !defaults.empty()) {
    // An empty list would print as the default and so not survive RecipeToYaml.
    return absl::InvalidArgumentError(
        absl::StrCat("'", key, "' ", Where(mark), " must not be empty; leave it out or write ",
                     "null for the default [", absl::StrJoin(defaults, ", "), "]"));
  }
  const Reflection* reflection = message->GetReflection();
  reflection->ClearField(message, field);
  Forget(key);
  for (size_t i = 0; i < elements.size(); ++i) {
    if (of_messages) {
      const std::string element_key = absl::StrCat(key, "[", i, "]");
      if (!elements[i].IsMap()) return WrongType(element_key, mark, "a map of keys", elements[i]);
      RETURN_IF_ERROR(ApplyMap(elements[i], reflection->AddMessage(message, field), element_key));
    } else {
      if (!elements[i].IsScalar()) return WrongType(key, mark, ExpectedValue(field), elements[i]);
      RETURN_IF_ERROR(SetScalarFromText(message, field, elements[i].Scalar(), key, Where(mark)));
    }
  }
  (*sources_)[key] = origin_.Location(mark);
  return absl::OkStatus();
}

absl::Status LayerApplier::CheckKey(const YAML::Node& key_node, const std::string& prefix,
                                    std::map<std::string, int>* seen_lines) const {
  const YAML::Mark mark = key_node.Mark();
  if (!key_node.IsScalar()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a key ", prefix.empty() ? "" : absl::StrCat("under '", prefix, "' "),
                     Where(mark), " must be a name, got ", Describe(key_node)));
  }
  const auto [seen, inserted] = seen_lines->emplace(key_node.Scalar(), mark.line + 1);
  if (inserted) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("duplicate key '", Join(prefix, key_node.Scalar()),
                                                 "' ", Where(mark), " (first at line ",
                                                 seen->second, ")"));
}

absl::Status LayerApplier::WrongType(const std::string& key, const YAML::Mark& mark,
                                     const std::string& expected, const YAML::Node& got) const {
  return absl::InvalidArgumentError(absl::StrCat("wrong type for '", key, "' ", Where(mark),
                                                 ": expected ", expected, ", got ", Describe(got)));
}

void LayerApplier::Forget(const std::string& key) {
  auto it = sources_->lower_bound(key);
  while (it != sources_->end() && absl::StartsWith(it->first, key)) {
    const char next = it->first.size() > key.size() ? it->first[key.size()] : '\0';
    if (next == '\0' || next == '.' || next == '[') {
      it = sources_->erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace

absl::Status ApplyLayer(const YAML::Node& layer, const LayerOrigin& origin, Recipe* recipe,
                        std::map<std::string, std::string>* sources) {
  if (layer.IsNull()) return absl::OkStatus();
  return LayerApplier(origin, sources).ApplyMap(layer, recipe, "");
}

}  // namespace rollout::config
