// Internal to the recipe loader (common/recipe_loader.h): how the Recipe schema is
// walked. Everything here reads proto descriptors and the options of
// proto/schema_options.proto, so a new recipe key needs no code, only a line in
// proto/recipe.proto. The schema must be a tree (no message contains itself).
//
// Messages name a key by its canonical dotted form ("actor.optim.lr",
// "resource_pools.gpu.nodes") and a place by a `where` phrase that follows the key
// ("at recipes/x.yaml:7", "at command line 'rollout.n=0'").
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace rollout::config {

// Field `name` of `type`, or nullptr.
const google::protobuf::FieldDescriptor* FindRecipeField(const google::protobuf::Descriptor* type,
                                                         absl::string_view name);

// The field of canonical `key` ("data.max_prompt_length"), after walking `*message` (a
// Recipe) down to the message that holds it, creating the messages on the way. Every
// segment must be a field.
const google::protobuf::FieldDescriptor* FieldAt(const std::string& key,
                                                 google::protobuf::Message** message);

// Field names of `type` in declaration order.
std::vector<std::string> FieldNames(const google::protobuf::Descriptor* type);

// verl nests actor, rollout, ref and model under `actor_rollout_ref`; the schema has
// them at the top level, with model under actor.
inline constexpr char kVerlGroup[] = "actor_rollout_ref";

// The canonical key of verl's `actor_rollout_ref.<child>` ("model" -> "actor.model"),
// or "" when verl has no such child.
std::string VerlChildKey(const std::string& child);

// The children VerlChildKey knows, sorted.
std::vector<std::string> VerlChildren();

// Whether top-level `name` is one of the actor's keys as verl's SFT trainer spells them
// at the top level: model (`model.partial_pretrain`), optim (`optim.lr`),
// ulysses_sequence_parallel_size and use_remove_padding; the schema has them under actor.
bool IsVerlSftTrainerKey(const std::string& name);

// A dotted key's segments in canonical form (`actor_rollout_ref.model.path` and
// `model.path` -> actor, model, path); other keys are returned unchanged.
std::vector<std::string> CanonicalSegments(std::vector<std::string> segments);

// The distinct segments right below `key` among the dotted `keys` ("b" for "a.b.c"
// below "a"), sorted: the names a table of verl keys puts under `key`.
std::vector<std::string> NamesBelow(const std::string& key, const std::vector<std::string>& keys);

// "unknown key '<parent_key>.<name>' <where> — did you mean '<x>'?", the suggestion
// being the closest of `siblings` or else a schema key ending in `.<name>` (a key
// that lives elsewhere); without one, "...; valid keys under '<parent_key>': a, b".
absl::Status UnknownKeyError(const std::string& parent_key, const std::string& name,
                             std::vector<std::string> siblings, const std::string& where);

// The elements of the field's (default_list); empty when it has none.
std::vector<std::string> DefaultList(const google::protobuf::FieldDescriptor* field);

// The number of elements a value of the repeated field must have ((list_size)); 0: any.
int ListSize(const google::protobuf::FieldDescriptor* field);

// The value YAML null sets in `field` (schema option null_value), or nullptr when null
// resets it to its default.
const std::string* NullValue(const google::protobuf::FieldDescriptor* field);

// Whether `type` or any message below it has a field for which `predicate` holds.
bool SchemaHasField(const google::protobuf::Descriptor* type,
                    const std::function<bool(const google::protobuf::FieldDescriptor*)>& predicate);

// Fills every empty repeated field that has a (default_list), below `message`
// included, creating the submessages that hold such fields.
void ApplyDefaultLists(google::protobuf::Message* message);

}  // namespace rollout::config
