// Internal to the recipe loader (common/recipe_loader.h): `${a.b.c}` references in
// string values.
#pragma once

#include <map>
#include <string>

#include "absl/status/status.h"
#include "proto/recipe.pb.h"

namespace rollout::config {

// Replaces each `${a.b.c}` in the recipe's string values, set or default (such as
// trainer.default_local_dir's), with the referenced key's value, itself resolved;
// the key may use verl spellings. A string that held a reference is then set, and
// checked against (choices). `sources` (canonical key -> location) places errors:
// an unknown key, a key that is not a single value, an unterminated `${`, a cycle.
absl::Status ResolveReferences(const std::map<std::string, std::string>& sources, Recipe* recipe);

}  // namespace rollout::config
