#include "common/recipe_interpolate.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/recipe_schema.h"
#include "common/recipe_values.h"
#include "common/status_macros.h"
#include "common/verl_inert_keys.h"
#include "common/verl_synonym_keys.h"

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

constexpr char kSelect[] = "oc.select:";

// A reference's body ("oc.select:a.b,1", ".b", "a.b") taken apart.
struct ReferenceParts {
  std::string key;            // canonical
  bool select = false;        // oc.select: the default stands in for a key that is not here
  std::string default_value;  // for select; "null" when none is given
};

std::string Unquote(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') && text.back() == text.front()) {
    text = text.substr(1, text.size() - 2);
  }
  return std::string(text);
}

// The canonical form of `key`, a synonym replaced by the key it sets.
std::string CanonicalKey(const std::string& key) {
  const std::string canonical = absl::StrJoin(CanonicalSegments(absl::StrSplit(key, '.')), ".");
  const VerlSynonymKey* synonym = FindVerlSynonymKey(canonical);
  return synonym != nullptr ? synonym->target : canonical;
}

ReferenceParts ParseReference(absl::string_view body, const std::string& owner) {
  ReferenceParts parts;
  if (absl::ConsumePrefix(&body, kSelect)) {
    parts.select = true;
    parts.default_value = "null";
    const size_t comma = body.find(',');
    if (comma != absl::string_view::npos) {
      parts.default_value = Unquote(body.substr(comma + 1));
      body = body.substr(0, comma);
    }
  }
  std::string path(absl::StripAsciiWhitespace(body));
  size_t dots = 0;
  while (dots < path.size() && path[dots] == '.') ++dots;
  if (dots > 0) {
    // One dot names a sibling of the owner, each further dot one level up.
    std::vector<std::string> base = absl::StrSplit(owner, '.');
    base.resize(base.size() - std::min(dots, base.size()));
    base.push_back(path.substr(dots));
    path = absl::StrJoin(base, ".");
  }
  parts.key = CanonicalKey(path);
  return parts;
}

// A field found by canonical key, and the message that holds it.
struct FoundField {
  const Message* message = nullptr;
  const FieldDescriptor* field = nullptr;
};

// Reads referenced values and sets the pending ones. The recipe is rewritten while a
// resolver reads it: a value is read either already resolved or raw and then expanded,
// to the same text.
class ReferenceResolver {
 public:
  ReferenceResolver(Recipe* recipe, std::map<std::string, std::string>* sources,
                    PendingReferences* pending)
      : recipe_(recipe), sources_(sources), pending_(pending) {}

  // `raw`, the value of `key`, with its references replaced. `chain` holds the keys
  // being expanded, outermost first, `key` last.
  absl::StatusOr<std::string> Expand(const std::string& raw, const std::string& key,
                                     std::vector<std::string>* chain) const;

  // Sets pending typed key `key` from its reference and drops it from the pending ones.
  absl::Status ResolveTyped(const std::string& key, std::vector<std::string>* chain) const;

  // Checks pending inert key `key` once resolved; the line noting it ignored.
  absl::StatusOr<std::string> ResolveInert(const std::string& key) const;

  // "at recipes/x.yaml:3", or "(its default)" for a key no layer set.
  std::string Where(const std::string& key) const {
    if (const auto it = pending_->typed.find(key); it != pending_->typed.end()) return it->second.where;
    const auto it = sources_->find(key);
    return it == sources_->end() ? "(its default)" : "at " + it->second;
  }

 private:
  // The single value a reference names, as YAML text: "null" for an oc.select default
  // of null.
  absl::StatusOr<std::string> Lookup(const std::string& reference, const std::string& owner,
                                     std::vector<std::string>* chain) const;
  // The field of canonical `key`, walking into map entries; `context` ends its errors.
  absl::StatusOr<FoundField> Walk(const std::string& key, const std::string& context) const;
  absl::StatusOr<std::string> Value(const Message& message, const FieldDescriptor* field,
                                    const std::string& key, std::vector<std::string>* chain) const;
  absl::Status CycleCheck(const std::string& key, const std::vector<std::string>& chain) const;

  Recipe* recipe_;
  std::map<std::string, std::string>* sources_;
  PendingReferences* pending_;
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

absl::StatusOr<FoundField> ReferenceResolver::Walk(const std::string& key,
                                                   const std::string& context) const {
  const std::vector<std::string> segments = absl::StrSplit(key, '.');
  const Message* message = recipe_;
  std::string prefix;
  for (size_t i = 0; i < segments.size(); ++i) {
    const FieldDescriptor* field = FindRecipeField(message->GetDescriptor(), segments[i]);
    if (field == nullptr) {
      return UnknownKeyError(prefix, segments[i], FieldNames(message->GetDescriptor()), context);
    }
    std::string walked = Join(prefix, segments[i]);
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
        return absl::InvalidArgumentError(absl::StrCat("unknown key '", walked, ".", segments[i + 1],
                                                       "' ", context, "; '", walked,
                                                       "' has no entries"));
      }
      if (entry == nullptr) return UnknownKeyError(walked, segments[i + 1], names, context);
      walked = Join(walked, segments[++i]);
      message = entry;
      field = field->message_type()->map_value();
    }
    if (i + 1 == segments.size()) return FoundField{message, field};
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || field->is_repeated()) {
      return UnknownKeyError(walked, segments[i + 1], {}, context);
    }
    message = &message->GetReflection()->GetMessage(*message, field);
    prefix = walked;
  }
  return UnknownKeyError("", "", FieldNames(Recipe::descriptor()), context);
}

absl::StatusOr<std::string> ReferenceResolver::Lookup(const std::string& reference,
                                                      const std::string& owner,
                                                      std::vector<std::string>* chain) const {
  const std::string context =
      absl::StrCat("in reference '${", reference, "}' of '", owner, "' ", Where(owner));
  const ReferenceParts parts = ParseReference(reference, owner);
  absl::StatusOr<FoundField> found = Walk(parts.key, context);
  if (!found.ok()) {
    // Not a setting here: a verl key ignored with its value, or oc.select's default.
    if (const auto it = pending_->inert_values.find(parts.key); it != pending_->inert_values.end()) {
      return it->second;
    }
    if (parts.select) return parts.default_value;
    return found.status();
  }
  if (found->field->is_repeated() || found->field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    return absl::InvalidArgumentError(
        absl::StrCat("reference '${", reference, "}' of '", owner, "' ", Where(owner),
                     " must name a single value; '", parts.key, "' is not one"));
  }
  return Value(*found->message, found->field, parts.key, chain);
}

absl::Status ReferenceResolver::CycleCheck(const std::string& key,
                                           const std::vector<std::string>& chain) const {
  if (std::find(chain.begin(), chain.end(), key) == chain.end()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("reference cycle in '", chain.front(), "' ",
                                                 Where(chain.front()), ": ",
                                                 absl::StrJoin(chain, " -> "), " -> ", key));
}

absl::StatusOr<std::string> ReferenceResolver::Value(const Message& message,
                                                     const FieldDescriptor* field,
                                                     const std::string& key,
                                                     std::vector<std::string>* chain) const {
  if (pending_->typed.count(key) > 0) RETURN_IF_ERROR(ResolveTyped(key, chain));
  const std::string text = ScalarText(message, field);
  if (field->cpp_type() != FieldDescriptor::CPPTYPE_STRING || !absl::StrContains(text, "${")) {
    return text;
  }
  RETURN_IF_ERROR(CycleCheck(key, *chain));
  chain->push_back(key);
  absl::StatusOr<std::string> expanded = Expand(text, key, chain);
  chain->pop_back();
  return expanded;
}

absl::Status ReferenceResolver::ResolveTyped(const std::string& key,
                                             std::vector<std::string>* chain) const {
  RETURN_IF_ERROR(CycleCheck(key, *chain));
  const DeferredReference pending = pending_->typed.at(key);
  const std::string body = pending.text.substr(2, pending.text.size() - 3);
  chain->push_back(key);
  ASSIGN_OR_RETURN(const FoundField found, Walk(key, pending.where));
  // The layer that deferred the key wrote below its parent messages, so they exist in
  // the recipe (a later reset of one dropped the key from the pending ones).
  Message* message = const_cast<Message*>(found.message);
  const FieldDescriptor* field = found.field;
  const Reflection* reflection = message->GetReflection();
  const ReferenceParts parts = ParseReference(body, key);
  absl::StatusOr<FoundField> source = Walk(parts.key, "");
  if (field->is_repeated() && source.ok() && source->field->is_repeated()) {
    // A list reference copies the list.
    reflection->ClearField(message, field);
    for (int i = 0; i < source->message->GetReflection()->FieldSize(*source->message, source->field); ++i) {
      RETURN_IF_ERROR(SetScalarFromText(message, field,
                                        ScalarText(*source->message, source->field, i), key,
                                        pending.where));
    }
  } else {
    ASSIGN_OR_RETURN(const std::string value, Lookup(body, key, chain));
    reflection->ClearField(message, field);
    if (value == "null") {
      sources_->erase(key);
    } else {
      RETURN_IF_ERROR(SetScalarFromText(message, field, value, key, pending.where));
    }
  }
  chain->pop_back();
  pending_->typed.erase(key);
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReferenceResolver::ResolveInert(const std::string& key) const {
  const DeferredReference pending = pending_->inert.at(key);
  const VerlInertKey* entry = FindVerlInertKey(key);
  std::vector<std::string> chain = {key};
  ASSIGN_OR_RETURN(std::string value,
                   Lookup(pending.text.substr(2, pending.text.size() - 3), key, &chain));
  value = absl::AsciiStrToLower(value);
  if (!VerlInertKeyAccepts(*entry, value)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "verl's '", key, "' ", pending.where, " cannot be ", value, " (", pending.text,
        ") here: ", entry->why, " (it may be ", absl::StrJoin(entry->accepted, " or "), ")"));
  }
  pending_->inert_values[key] = value;
  return absl::StrCat("verl's '", key, "' ", pending.where, " is ignored: ", entry->why);
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

bool IsWholeReference(const std::string& text) {
  return absl::StartsWith(text, "${") && absl::EndsWith(text, "}") &&
         text.find("${", 2) == std::string::npos && text.find('}') == text.size() - 1;
}

std::string ReferencedKey(const std::string& text, const std::string& owner) {
  if (!IsWholeReference(text)) return "";
  return ParseReference(absl::string_view(text).substr(2, text.size() - 3), owner).key;
}

absl::Status ResolveReferences(std::map<std::string, std::string>* sources,
                               PendingReferences* pending, Recipe* recipe,
                               std::vector<std::string>* ignored_verl_keys) {
  const ReferenceResolver resolver(recipe, sources, pending);
  while (!pending->typed.empty()) {
    std::vector<std::string> chain;
    RETURN_IF_ERROR(resolver.ResolveTyped(pending->typed.begin()->first, &chain));
  }
  for (const auto& [key, reference] : pending->inert) {
    ASSIGN_OR_RETURN(std::string note, resolver.ResolveInert(key));
    ignored_verl_keys->push_back(std::move(note));
  }
  return ResolveMessage(resolver, recipe, "");
}

}  // namespace rollout::config
