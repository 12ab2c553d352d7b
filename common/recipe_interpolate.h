// Internal to the recipe loader (common/recipe_loader.h): `${...}` references.
//
// A reference names a key the way verl's (OmegaConf) configs do:
//   ${a.b.c}                  the key's value (verl spellings accepted),
//   ${oc.select:a.b.c,dflt}   the same, or `dflt` (null when left out) where the key is
//                             not a setting here (a verl key that means nothing here,
//                             or none at all),
//   ${.c} / ${..b.c}          relative to the key that holds the reference (its
//                             siblings, its parent's siblings).
// Inside string values a reference may sit among other text. A value that is one whole
// reference may also stand for a number, a boolean, an enum, a list (a list reference
// copies the list) or a verl key the loader ignores; those are kept as written until
// every layer is applied (PendingReferences), then resolved and checked as if the value
// had been written out.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/recipe.pb.h"

namespace rollout::config {

struct DeferredReference {
  std::string text;   // the value as written: "${...}"
  std::string where;  // "at recipes/x.yaml:12"
};

// What the layers leave to the end of loading, by canonical key.
struct PendingReferences {
  // Keys of the schema that are not single strings.
  std::map<std::string, DeferredReference> typed;
  // verl keys the loader ignores (common/verl_inert_keys.h), checked against the
  // values their entry accepts once resolved.
  std::map<std::string, DeferredReference> inert;
  // The values of the verl keys ignored so far (lower-case YAML text), which
  // references may read.
  std::map<std::string, std::string> inert_values;
};

// Whether `text` is one whole `${...}` reference.
bool IsWholeReference(const std::string& text);

// The canonical key a whole reference names, for a reference held by canonical key
// `owner` (relative references resolved): "${oc.select:actor_rollout_ref.actor.ppo_epochs,1}"
// -> "actor.ppo_epochs". "" when `text` is not a whole reference.
std::string ReferencedKey(const std::string& text, const std::string& owner);

// Resolves `pending` into `recipe` (typed keys set, inert keys checked and each noted in
// `ignored_verl_keys`), then replaces each `${...}` in the recipe's string values, set
// or default (such as trainer.default_local_dir's), with the referenced key's value,
// itself resolved. A string that held a reference is then set, and checked against
// (choices). `sources` (canonical key -> location) places errors: an unknown key, a key
// that is not a single value, an unterminated `${`, a cycle, a resolved value of the
// wrong type or out of bounds.
absl::Status ResolveReferences(std::map<std::string, std::string>* sources,
                               PendingReferences* pending, Recipe* recipe,
                               std::vector<std::string>* ignored_verl_keys);

}  // namespace rollout::config
