#include "common/recipe_interpolate.h"

#include <algorithm>
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

namespace {

std::string Join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : absl::StrCat(prefix, ".", name);
}

bool HasTemplatedDefault(const FieldDescriptor* field) {
  return field->cpp_type() == FieldDescriptor::CPPTYPE_STRING && !field->is_repeated() &&
         absl::StrContains(field->default_value_string(), "${");
}

// Reads referenced values. The recipe may be rewritten while a resolver reads it:
// a string is read either already resolved or raw and then expanded, to the same text.
class ReferenceResolver {
 public:
  ReferenceResolver(const Recipe& recipe, const std::map<std::string, std::string>& sources)
      : recipe_(recipe), sources_(sources) {}

  // `raw`, the value of `key`, with its references replaced. `chain` holds the keys
  // being expanded, outermost first, `key` last.
  absl::StatusOr<std::string> Expand(const std::string& raw, const std::string& key,
                                     std::vector<std::string>* chain) const;

  // "at recipes/x.yaml:3", or "(its default)" for a key no layer set.
  std::string Where(const std::string& key) const {
    const auto it = sources_.find(key);
    return it == sources_.end() ? "(its default)" : "at " + it->second;
  }

 private:
  absl::StatusOr<std::string> Lookup(const std::string& reference, const std::string& owner,
                                     std::vector<std::string>* chain) const;
  absl::StatusOr<std::string> Value(const Message& message, const FieldDescriptor* field,
                                    const std::string& key, std::vector<std::string>* chain) const;

  const Recipe& recipe_;
  const std::map<std::string, std::string>& sources_;
};

absl::StatusOr<std::string> ReferenceResolver::Expand(const std::string& raw,
                                                      const std::string& key,
                                                      std::vector<std::string>* chain) const {
  std::string expanded;
  size_t position = 0;
  for (size_t start = raw.find("${"); start != std::string::npos;
       start = raw.find("${", position)) {
    const size_t end = raw.find('}', start + 2);
    if (end == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("unterminated '${' in '", key, "' ", Where(key), ": '", raw, "'"));
    }
    ASSIGN_OR_RETURN(const std::string value,
                     Lookup(raw.substr(start + 2, end - start - 2), key, chain));
    absl::StrAppend(&expanded, raw.substr(position, start - position), value);
    position = end + 1;
  }
  absl::StrAppend(&expanded, raw.substr(position));
  return expanded;
}

absl::StatusOr<std::string> ReferenceResolver::Lookup(const std::string& reference,
                                                      const std::string& owner,
                                                      std::vector<std::string>* chain) const {
  const std::string context =
      absl::StrCat("in reference '${", reference, "}' of '", owner, "' ", Where(owner));
  const std::vector<std::string> segments = CanonicalSegments(absl::StrSplit(reference, '.'));
  const Message* message = &recipe_;
  std::string prefix;
  for (size_t i = 0; i < segments.size(); ++i) {
    const FieldDescriptor* field = FindRecipeField(message->GetDescriptor(), segments[i]);
    if (field == nullptr) {
      return UnknownKeyError(prefix, segments[i], FieldNames(message->GetDescriptor()), context);
    }
    std::string key = Join(prefix, segments[i]);
    const Reflection* reflection = message->GetReflection();
    if (field->is_map() && i + 1 < segments.size()) {
      // `resource_pools.gpu`: step into the entry named by the next segment.
      const FieldDescriptor* key_field = field->message_type()->map_key();
      std::vector<std::string> names;
      const Message* entry = nullptr;
      for (int j = 0; j < reflection->FieldSize(*message, field); ++j) {
        const Message& candidate = reflection->GetRepeatedMessage(*message, field, j);
        names.push_back(ScalarText(candidate, key_field));
        if (names.back() == segments[i + 1]) entry = &candidate;
      }
      if (entry == nullptr && names.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("unknown key '", key, ".", segments[i + 1],
                                                       "' ", context, "; '", key,
                                                       "' has no entries"));
      }
      if (entry == nullptr) return UnknownKeyError(key, segments[i + 1], names, context);
      key = Join(key, segments[++i]);
      message = entry;
      field = field->message_type()->map_value();
      reflection = message->GetReflection();
    }
    if (field->is_repeated() ||
        (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && i + 1 == segments.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("reference '${", reference, "}' of '", owner, "' ", Where(owner),
                       " must name a single value; '", key, "' is not one"));
    }
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      message = &reflection->GetMessage(*message, field);
      prefix = key;
      continue;
    }
    if (i + 1 < segments.size()) return UnknownKeyError(key, segments[i + 1], {}, context);
    return Value(*message, field, key, chain);
  }
  return UnknownKeyError("", "", FieldNames(Recipe::descriptor()), context);
}

absl::StatusOr<std::string> ReferenceResolver::Value(const Message& message,
                                                     const FieldDescriptor* field,
                                                     const std::string& key,
                                                     std::vector<std::string>* chain) const {
  const std::string text = ScalarText(message, field);
  if (field->cpp_type() != FieldDescriptor::CPPTYPE_STRING || !absl::StrContains(text, "${")) {
    return text;
  }
  if (std::find(chain->begin(), chain->end(), key) != chain->end()) {
    return absl::InvalidArgumentError(absl::StrCat("reference cycle in '", chain->front(), "' ",
                                                   Where(chain->front()), ": ",
                                                   absl::StrJoin(*chain, " -> "), " -> ", key));
  }
  chain->push_back(key);
  absl::StatusOr<std::string> expanded = Expand(text, key, chain);
  chain->pop_back();
  return expanded;
}

// Element `index` of a repeated string field, or the singular field for -1.
absl::Status ResolveString(const ReferenceResolver& resolver, Message* message,
                           const FieldDescriptor* field, int index, const std::string& key) {
  const std::string raw = ScalarText(*message, field, index);
  if (!absl::StrContains(raw, "${")) return absl::OkStatus();
  std::vector<std::string> chain = {key};
  ASSIGN_OR_RETURN(const std::string expanded, resolver.Expand(raw, key, &chain));
  const Reflection* reflection = message->GetReflection();
  index < 0 ? reflection->SetString(message, field, expanded)
            : reflection->SetRepeatedString(message, field, index, expanded);
  return CheckChoice(field, expanded, key, resolver.Where(key));
}

absl::Status ResolveMessage(const ReferenceResolver& resolver, Message* message,
                            const std::string& prefix) {
  const Reflection* reflection = message->GetReflection();
  for (int i = 0; i < message->GetDescriptor()->field_count(); ++i) {
    const FieldDescriptor* field = message->GetDescriptor()->field(i);
    const std::string key = Join(prefix, field->name());
    if (field->is_map()) {
      const FieldDescriptor* key_field = field->message_type()->map_key();
      const FieldDescriptor* value_field = field->message_type()->map_value();
      for (int j = 0; j < reflection->FieldSize(*message, field); ++j) {
        Message* entry = reflection->MutableRepeatedMessage(message, field, j);
        const std::string entry_key = Join(key, ScalarText(*entry, key_field));
        RETURN_IF_ERROR(
            value_field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE
                ? ResolveMessage(resolver,
                                 entry->GetReflection()->MutableMessage(entry, value_field),
                                 entry_key)
                : ResolveString(resolver, entry, value_field, -1, entry_key));
      }
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (field->is_repeated()) {
        for (int j = 0; j < reflection->FieldSize(*message, field); ++j) {
          RETURN_IF_ERROR(ResolveMessage(resolver,
                                         reflection->MutableRepeatedMessage(message, field, j),
                                         absl::StrCat(key, "[", j, "]")));
        }
      } else if (reflection->HasField(*message, field) ||
                 SchemaHasField(field->message_type(), HasTemplatedDefault)) {
        RETURN_IF_ERROR(ResolveMessage(resolver, reflection->MutableMessage(message, field), key));
      }
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
      if (field->is_repeated()) {
        for (int j = 0; j < reflection->FieldSize(*message, field); ++j) {
          RETURN_IF_ERROR(ResolveString(resolver, message, field, j, key));
        }
      } else {
        RETURN_IF_ERROR(ResolveString(resolver, message, field, -1, key));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ResolveReferences(const std::map<std::string, std::string>& sources, Recipe* recipe) {
  const ReferenceResolver resolver(*recipe, sources);
  return ResolveMessage(resolver, recipe, "");
}

}  // namespace rollout::config
