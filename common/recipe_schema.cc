#include "common/recipe_schema.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/check.h"
#include "common/edit_distance.h"
#include "common/recipe_values.h"
#include "proto/recipe.pb.h"
#include "proto/schema_options.pb.h"

namespace rollout::config {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

namespace {

// Every schema key, with map entries written as `<name>` ("resource_pools.<name>.nodes").
void CollectKeys(const Descriptor* type, const std::string& prefix,
                 std::vector<std::string>* keys) {
  for (int i = 0; i < type->field_count(); ++i) {
    const FieldDescriptor* field = type->field(i);
    const std::string key = prefix + field->name();
    keys->push_back(key);
    if (field->is_map()) {
      const FieldDescriptor* value = field->message_type()->map_value();
      if (value->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        CollectKeys(value->message_type(), key + ".<name>.", keys);
      }
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      CollectKeys(field->message_type(), key + ".", keys);
    }
  }
}

// Schema keys whose last segment is `name`, those sharing the longest leading
// segments with `parent_key` first.
std::vector<std::string> KeysNamed(const std::string& name, const std::string& parent_key) {
  std::vector<std::string> keys;
  CollectKeys(Recipe::descriptor(), "", &keys);
  const std::vector<std::string> parent = absl::StrSplit(parent_key, '.', absl::SkipEmpty());
  std::vector<std::pair<int, std::string>> ranked;
  for (const std::string& key : keys) {
    if (key != name && !absl::EndsWith(key, "." + name)) continue;
    const std::vector<std::string> segments = absl::StrSplit(key, '.');
    int shared = 0;
    while (shared < static_cast<int>(std::min(parent.size(), segments.size())) &&
           parent[shared] == segments[shared]) {
      ++shared;
    }
    ranked.emplace_back(-shared, key);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> best;
  for (const auto& [score, key] : ranked) {
    if (score == ranked.front().first) best.push_back(key);
  }
  return best;
}

// "'a'", "'a' or 'b'", "'a', 'b' or 'c'".
std::string Alternatives(const std::vector<std::string>& options) {
  std::vector<std::string> quoted;
  for (const std::string& option : options) quoted.push_back(absl::StrCat("'", option, "'"));
  if (quoted.size() <= 1) return absl::StrJoin(quoted, "");
  const std::string last = quoted.back();
  quoted.pop_back();
  return absl::StrCat(absl::StrJoin(quoted, ", "), " or ", last);
}

}  // namespace

const FieldDescriptor* FindRecipeField(const Descriptor* type, absl::string_view name) {
  return type->FindFieldByName(std::string(name));
}

const FieldDescriptor* FieldAt(const std::string& key, Message** message) {
  const std::vector<std::string> segments = absl::StrSplit(key, '.');
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    const FieldDescriptor* field = FindRecipeField((*message)->GetDescriptor(), segments[i]);
    *message = (*message)->GetReflection()->MutableMessage(*message, field);
  }
  return FindRecipeField((*message)->GetDescriptor(), segments.back());
}

std::vector<std::string> FieldNames(const Descriptor* type) {
  std::vector<std::string> names;
  for (int i = 0; i < type->field_count(); ++i) names.push_back(type->field(i)->name());
  return names;
}

std::string VerlChildKey(const std::string& child) {
  if (child == "model") return "actor.model";
  if (child == "actor" || child == "rollout" || child == "ref") return child;
  return "";
}

std::vector<std::string> VerlChildren() { return {"actor", "model", "ref", "rollout"}; }

bool IsVerlSftTrainerKey(const std::string& name) {
  return name == "model" || name == "optim" || name == "ulysses_sequence_parallel_size" ||
         name == "use_remove_padding";
}

std::vector<std::string> CanonicalSegments(std::vector<std::string> segments) {
  if (!segments.empty() && IsVerlSftTrainerKey(segments[0])) {
    segments.insert(segments.begin(), "actor");
    return segments;
  }
  if (segments.size() < 2 || segments[0] != kVerlGroup) return segments;
  const std::string child = VerlChildKey(segments[1]);
  if (child.empty()) return segments;
  std::vector<std::string> canonical = absl::StrSplit(child, '.');
  canonical.insert(canonical.end(), segments.begin() + 2, segments.end());
  return canonical;
}

std::vector<std::string> NamesBelow(const std::string& key, const std::vector<std::string>& keys) {
  const std::string prefix = key + ".";
  std::vector<std::string> names;
  for (const std::string& dotted : keys) {
    if (!absl::StartsWith(dotted, prefix)) continue;
    const std::string rest = dotted.substr(prefix.size());
    names.push_back(rest.substr(0, rest.find('.')));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

absl::Status UnknownKeyError(const std::string& parent_key, const std::string& name,
                             std::vector<std::string> siblings, const std::string& where) {
  const std::string prefix = parent_key.empty() ? "" : parent_key + ".";
  const std::string head = absl::StrCat("unknown key '", prefix, name, "' ", where);
  const std::string sibling = ClosestMatch(name, siblings);
  if (!sibling.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(head, " ", kEmDash, " did you mean '", prefix, sibling, "'?"));
  }
  const std::vector<std::string> moved = KeysNamed(name, parent_key);
  if (!moved.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(head, " ", kEmDash, " did you mean ", Alternatives(moved), "?"));
  }
  if (siblings.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(head, "; '", parent_key, "' has no keys under it"));
  }
  std::sort(siblings.begin(), siblings.end());
  const std::string under = parent_key.empty()
                                ? "valid top-level keys"
                                : absl::StrCat("valid keys under '", parent_key, "'");
  return absl::InvalidArgumentError(
      absl::StrCat(head, "; ", under, ": ", absl::StrJoin(siblings, ", ")));
}

std::vector<std::string> DefaultList(const FieldDescriptor* field) {
  if (!field->options().HasExtension(default_list)) return {};
  return absl::StrSplit(field->options().GetExtension(default_list), ',', absl::SkipEmpty());
}

int ListSize(const FieldDescriptor* field) {
  return field->options().HasExtension(list_size) ? field->options().GetExtension(list_size) : 0;
}

const std::string* NullValue(const FieldDescriptor* field) {
  if (!field->options().HasExtension(null_value)) return nullptr;
  return &field->options().GetExtension(null_value);
}

bool SchemaHasField(const Descriptor* type,
                    const std::function<bool(const FieldDescriptor*)>& predicate) {
  for (int i = 0; i < type->field_count(); ++i) {
    const FieldDescriptor* field = type->field(i);
    if (predicate(field)) return true;
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE &&
        SchemaHasField(field->message_type(), predicate)) {
      return true;
    }
  }
  return false;
}

void ApplyDefaultLists(Message* message) {
  const Reflection* reflection = message->GetReflection();
  const auto has_default_list = [](const FieldDescriptor* field) {
    return field->options().HasExtension(default_list);
  };
  for (int i = 0; i < message->GetDescriptor()->field_count(); ++i) {
    const FieldDescriptor* field = message->GetDescriptor()->field(i);
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      if (has_default_list(field) && reflection->FieldSize(*message, field) == 0) {
        for (const std::string& element : DefaultList(field)) {
          const absl::Status added = SetScalarFromText(message, field, element, field->full_name(),
                                                       "in its (default_list)");
          ROLLOUT_CHECK(added.ok()) << added.message();
        }
      }
    } else if (field->is_repeated()) {
      // Map entries and list elements exist only where a layer wrote them.
      for (int j = 0; j < reflection->FieldSize(*message, field); ++j) {
        ApplyDefaultLists(reflection->MutableRepeatedMessage(message, field, j));
      }
    } else if (SchemaHasField(field->message_type(), has_default_list)) {
      ApplyDefaultLists(reflection->MutableMessage(message, field));
    }
  }
}

}  // namespace rollout::config
