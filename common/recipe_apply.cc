#include "common/recipe_apply.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/recipe_schema.h"
#include "common/recipe_values.h"
#include "common/status_macros.h"
#include "common/verl_inert_keys.h"
#include "common/verl_synonym_keys.h"

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

// The keys a recipe may write under `prefix`, whose message is `type`: its fields and the
// verl keys ignored there (verl_inert_keys.h), sorted, for unknown-key messages.
std::vector<std::string> KeysUnder(const std::string& prefix, const google::protobuf::Descriptor* type) {
  std::vector<std::string> keys = FieldNames(type);
  const std::vector<std::string> inert = VerlInertKeysUnder(prefix);
  keys.insert(keys.end(), inert.begin(), inert.end());
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
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

// A value as verl_inert_keys.h's entries spell the ones they accept.
std::string InertValueText(const YAML::Node& value) {
  if (value.IsNull()) return "null";
  if (value.IsScalar()) return absl::AsciiStrToLower(value.Scalar());
  if (value.IsMap()) return value.size() == 0 ? "{}" : "a map";
  return value.size() == 0 ? "[]" : "a list";
}

// Whether two YAML scalars hold the same value: equal numbers ("1" and "1.0") or equal
// text.
bool SameScalar(const std::string& a, const std::string& b) {
  double x = 0, y = 0;
  if (absl::SimpleAtod(a, &x) && absl::SimpleAtod(b, &y)) return x == y;
  return a == b;
}

class LayerApplier {
 public:
  LayerApplier(const LayerOrigin& origin, Recipe* recipe,
               std::map<std::string, std::string>* sources,
               std::vector<std::string>* ignored_verl_keys, PendingReferences* pending)
      : origin_(origin),
        recipe_(recipe),
        sources_(sources),
        ignored_verl_keys_(ignored_verl_keys),
        pending_(pending) {}

  // `map`'s keys are fields of `message`, whose own key is `prefix` ("" at the top).
  absl::Status ApplyMap(const YAML::Node& map, Message* message, const std::string& prefix);
  // The note on the layer's `_target_` entries, if it had any.
  void NoteSkippedTargets();

 private:
  absl::Status ApplyVerlGroup(const YAML::Node& group, const YAML::Mark& mark, Message* recipe);
  // Ignores canonical `key` when it is a verl key of verl_inert_keys.h with a value the
  // table accepts, noting it; true then. Another value is an error, unless the key is
  // also a field of the schema (`is_field`: rollout.name), which then takes the value.
  absl::StatusOr<bool> SkipVerlInertKey(const std::string& key, const YAML::Node& value,
                                        const YAML::Mark& mark, bool is_field);
  // A map of verl keys below canonical `key` that the schema does not have
  // (`reward_model`), each ignored as SkipVerlInertKey does, applied to its target when
  // it is a synonym (`reward_model.overlong_buffer.len`), or else unknown.
  absl::Status SkipVerlInertMap(const YAML::Node& map, const YAML::Mark& mark, const std::string& key);
  // Writes a verl synonym's value to its target (common/verl_synonym_keys.h).
  absl::Status ApplySynonym(const VerlSynonymKey& synonym, const YAML::Node& value,
                            const YAML::Mark& mark);
  // Notes that this layer sets synonym target `target` under the spelling `key`; whether
  // to apply the value: not a null (reset) after another spelling's value in this layer
  // (verl's dumps hold `warmup_style: null` beside `lr_scheduler_type: cosine`). An error
  // when another spelling gave it another value.
  absl::StatusOr<bool> NoteTargetWrite(const std::string& target, const std::string& key,
                                       const YAML::Node& value, const YAML::Mark& mark);
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
  // Erases `key` and every key under it from the sources and the pending references.
  void Forget(const std::string& key);
  // Whether the entry is Hydra's `_target_`, which is skipped (counted for the note).
  bool SkipTarget(const YAML::Node& name, const YAML::Mark& mark);
  std::string Where(const YAML::Mark& mark) const { return "at " + origin_.Location(mark); }

  // What set a synonym target in this layer.
  struct TargetWrite {
    std::string key;    // the spelling used
    bool reset;         // null: back to the default
    std::string value;  // its YAML text ("null" for a reset)
    std::string where;  // "at recipes/x.yaml:7"
  };

  const LayerOrigin& origin_;
  Recipe* recipe_;
  std::map<std::string, std::string>* sources_;
  std::vector<std::string>* ignored_verl_keys_;
  PendingReferences* pending_;
  std::map<std::string, TargetWrite> target_writes_;  // by target key
  int skipped_targets_ = 0;
  std::string first_target_where_;
  int map_entry_depth_ = 0;  // > 0 while applying a map field's entry (never deferred)
};

absl::Status LayerApplier::ApplyMap(const YAML::Node& map, Message* message,
                                    const std::string& prefix) {
  const bool top = prefix.empty() && message->GetDescriptor() == Recipe::descriptor();
  std::map<std::string, int> seen_lines;
  for (const auto& entry : map) {
    RETURN_IF_ERROR(CheckKey(entry.first, prefix, &seen_lines));
    const std::string& name = entry.first.Scalar();
    const YAML::Mark mark = entry.first.Mark();
    if (SkipTarget(entry.first, mark)) continue;
    if (top && name == "extends") {
      if (origin_.extends_followed) continue;
      return absl::InvalidArgumentError(
          absl::StrCat("'extends' ", Where(mark), " is only allowed at the top of a recipe file"));
    }
    if (top && name == kVerlGroup) {
      RETURN_IF_ERROR(ApplyVerlGroup(entry.second, mark, message));
      continue;
    }
    if (top && IsVerlSftTrainerKey(name)) {  // `optim.lr` is the actor's `actor.optim.lr`
      YAML::Node actor(YAML::NodeType::Map);
      actor.force_insert(entry.first, entry.second);
      RETURN_IF_ERROR(ApplyMap(actor, static_cast<Recipe*>(message)->mutable_actor(), "actor"));
      continue;
    }
    const FieldDescriptor* field = FindRecipeField(message->GetDescriptor(), name);
    const std::string key = Join(prefix, name);
    ASSIGN_OR_RETURN(const bool ignored, SkipVerlInertKey(key, entry.second, mark, field != nullptr));
    if (ignored) continue;
    if (const VerlSynonymKey* synonym = FindVerlSynonymKey(key); field == nullptr && synonym) {
      RETURN_IF_ERROR(ApplySynonym(*synonym, entry.second, mark));
      continue;
    }
    if (field == nullptr && HasVerlInertKeysUnder(key)) {
      RETURN_IF_ERROR(SkipVerlInertMap(entry.second, mark, key));
      continue;
    }
    if (field == nullptr) {
      return UnknownKeyError(prefix, name, KeysUnder(prefix, message->GetDescriptor()), Where(mark));
    }
    if (IsVerlSynonymTarget(key)) {
      ASSIGN_OR_RETURN(const bool apply, NoteTargetWrite(key, key, entry.second, mark));
      if (!apply) continue;
    }
    RETURN_IF_ERROR(ApplyField(entry.second, mark, message, field, key));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> LayerApplier::SkipVerlInertKey(const std::string& key, const YAML::Node& value,
                                                    const YAML::Mark& mark, bool is_field) {
  const VerlInertKey* entry = FindVerlInertKey(key);
  if (entry == nullptr) return false;
  if (!is_field && value.IsScalar() && IsWholeReference(value.Scalar())) {
    pending_->inert[key] = {value.Scalar(), Where(mark)};
    return true;
  }
  const std::string text = InertValueText(value);
  if (VerlInertKeyAccepts(*entry, text)) {
    ignored_verl_keys_->push_back(absl::StrCat("verl's '", key, "' ", Where(mark), " is ignored: ", entry->why));
    pending_->inert.erase(key);
    pending_->inert_values[key] = text;
    return true;
  }
  if (is_field) return false;
  if (value.IsMap() && HasVerlInertKeysUnder(key)) {
    // Some keys of the map are ignored (override_config.attn_implementation): each key
    // must be one of them.
    RETURN_IF_ERROR(SkipVerlInertMap(value, mark, key));
    return true;
  }
  return absl::InvalidArgumentError(absl::StrCat("verl's '", key, "' ", Where(mark), " cannot be ", text,
                                                 " here: ", entry->why, " (it may be ",
                                                 absl::StrJoin(entry->accepted, " or "), ")"));
}

absl::Status LayerApplier::ApplySynonym(const VerlSynonymKey& synonym, const YAML::Node& value,
                                        const YAML::Mark& mark) {
  // verl's copy of the setting (`rollout.prompt_length: ${data.max_prompt_length}`).
  if (value.IsScalar() && ReferencedKey(value.Scalar(), synonym.key) == synonym.target) {
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(const bool apply, NoteTargetWrite(synonym.target, synonym.key, value, mark));
  if (!apply) return absl::OkStatus();
  Message* message = recipe_;
  const FieldDescriptor* field = FieldAt(synonym.target, &message);
  return ApplyField(value, mark, message, field, synonym.target);
}

absl::StatusOr<bool> LayerApplier::NoteTargetWrite(const std::string& target,
                                                   const std::string& key,
                                                   const YAML::Node& value,
                                                   const YAML::Mark& mark) {
  const std::string text =
      value.IsNull() ? "null" : value.IsScalar() ? value.Scalar() : Describe(value);
  const TargetWrite write{key, value.IsNull(), text, Where(mark)};
  const auto [earlier, first] = target_writes_.emplace(target, write);
  if (first || earlier->second.key == key) {  // the same spelling again: the later wins
    earlier->second = write;
    return true;
  }
  if (write.reset) return false;  // another spelling's value stands (or it was null too)
  if (earlier->second.reset || SameScalar(earlier->second.value, write.value)) {
    earlier->second = write;
    return true;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "'", earlier->second.key, "' ", earlier->second.where, " (", earlier->second.value, ") and '",
      key, "' ", write.where, " (", write.value, ") are one setting here, '", target,
      "': give it one value"));
}

absl::Status LayerApplier::SkipVerlInertMap(const YAML::Node& map, const YAML::Mark& mark,
                                            const std::string& key) {
  if (map.IsNull()) return absl::OkStatus();
  if (!map.IsMap()) return WrongType(key, mark, "a map of keys", map);
  std::map<std::string, int> seen_lines;
  for (const auto& entry : map) {
    RETURN_IF_ERROR(CheckKey(entry.first, key, &seen_lines));
    if (SkipTarget(entry.first, entry.first.Mark())) continue;
    const std::string child = Join(key, entry.first.Scalar());
    ASSIGN_OR_RETURN(const bool ignored, SkipVerlInertKey(child, entry.second, entry.first.Mark(), false));
    if (ignored) continue;
    if (const VerlSynonymKey* synonym = FindVerlSynonymKey(child)) {
      RETURN_IF_ERROR(ApplySynonym(*synonym, entry.second, entry.first.Mark()));
      continue;
    }
    if (HasVerlInertKeysUnder(child)) {
      RETURN_IF_ERROR(SkipVerlInertMap(entry.second, entry.first.Mark(), child));
      continue;
    }
    if (const VerlInertKey* parent = FindVerlInertKey(key)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "verl's '", child, "' ", Where(entry.first.Mark()), " cannot be set here: ", parent->why, " (under '", key,
          "' the keys that ask for nothing here may be set, and are ignored: ", absl::StrJoin(VerlInertKeysUnder(key), ", "),
          ")"));
    }
    std::vector<std::string> valid = VerlInertKeysUnder(key);
    const std::vector<std::string> synonyms = VerlSynonymKeysUnder(key);
    valid.insert(valid.end(), synonyms.begin(), synonyms.end());
    std::sort(valid.begin(), valid.end());
    valid.erase(std::unique(valid.begin(), valid.end()), valid.end());
    return UnknownKeyError(key, entry.first.Scalar(), valid, Where(entry.first.Mark()));
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
    if (SkipTarget(entry.first, entry.first.Mark())) continue;
    const std::string key = VerlChildKey(entry.first.Scalar());
    if (key.empty()) {
      const std::string verl_key = Join(kVerlGroup, entry.first.Scalar());
      ASSIGN_OR_RETURN(const bool ignored,
                       SkipVerlInertKey(verl_key, entry.second, entry.first.Mark(), /*is_field=*/false));
      if (ignored) continue;
      return UnknownKeyError(kVerlGroup, entry.first.Scalar(), VerlChildren(),
                             Where(entry.first.Mark()));
    }
    // Walk to the canonical field: "actor.model" is field model of recipe.actor.
    Message* message = recipe;
    const FieldDescriptor* field = FieldAt(key, &message);
    RETURN_IF_ERROR(ApplyField(entry.second, entry.first.Mark(), message, field, key));
  }
  return absl::OkStatus();
}

absl::Status LayerApplier::ApplyField(const YAML::Node& value, const YAML::Mark& mark,
                                      Message* message, const FieldDescriptor* field,
                                      const std::string& key) {
  const Reflection* reflection = message->GetReflection();
  if (value.IsNull()) {
    if (const std::string* null = NullValue(field)) {
      reflection->SetString(message, field, *null);
      (*sources_)[key] = origin_.Location(mark);
      return absl::OkStatus();
    }
    reflection->ClearField(message, field);
    Forget(key);
    return absl::OkStatus();
  }
  if (value.IsScalar() && IsWholeReference(value.Scalar()) && map_entry_depth_ == 0 &&
      !field->is_map() &&
      (field->is_repeated() || (field->cpp_type() != FieldDescriptor::CPPTYPE_STRING &&
                                field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE))) {
    pending_->typed[key] = {value.Scalar(), Where(mark)};
    (*sources_)[key] = origin_.Location(mark);
    return absl::OkStatus();
  }
  if (!value.IsMap()) pending_->typed.erase(key);
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
    ++map_entry_depth_;
    const absl::Status applied = ApplyField(entry.second, entry_mark, map_entry, value_field, entry_key);
    --map_entry_depth_;
    RETURN_IF_ERROR(applied);
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
  if (const int size = ListSize(field); size > 0 && static_cast<int>(elements.size()) != size) {
    return absl::InvalidArgumentError(absl::StrCat("'", key, "' ", Where(mark),
                                                   " must be a list of ", size, " values, got ",
                                                   elements.size()));
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

// Erases `key` and the keys under it ("key.x", "key[0]") from `keys`.
template <typename Value>
void EraseKeyAndBelow(const std::string& key, std::map<std::string, Value>* keys) {
  auto it = keys->lower_bound(key);
  while (it != keys->end() && absl::StartsWith(it->first, key)) {
    const char next = it->first.size() > key.size() ? it->first[key.size()] : '\0';
    if (next == '\0' || next == '.' || next == '[') {
      it = keys->erase(it);
    } else {
      ++it;
    }
  }
}

void LayerApplier::Forget(const std::string& key) {
  EraseKeyAndBelow(key, sources_);
  EraseKeyAndBelow(key, &pending_->typed);
}

bool LayerApplier::SkipTarget(const YAML::Node& name, const YAML::Mark& mark) {
  if (name.Scalar() != "_target_") return false;
  if (skipped_targets_++ == 0) first_target_where_ = Where(mark);
  return true;
}

void LayerApplier::NoteSkippedTargets() {
  if (skipped_targets_ == 0) return;
  const std::string more =
      skipped_targets_ > 1 ? absl::StrCat(" and ", skipped_targets_ - 1, " more") : "";
  ignored_verl_keys_->push_back(absl::StrCat(
      "verl's '_target_' entries (", first_target_where_, more,
      ") are ignored: the Python classes Hydra builds verl's config into"));
}

}  // namespace

absl::Status ApplyLayer(const YAML::Node& layer, const LayerOrigin& origin, Recipe* recipe,
                        std::map<std::string, std::string>* sources,
                        std::vector<std::string>* ignored_verl_keys, PendingReferences* pending) {
  if (layer.IsNull()) return absl::OkStatus();
  LayerApplier applier(origin, recipe, sources, ignored_verl_keys, pending);
  RETURN_IF_ERROR(applier.ApplyMap(layer, recipe, ""));
  applier.NoteSkippedTargets();
  return absl::OkStatus();
}

}  // namespace rollout::config
