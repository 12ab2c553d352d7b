// Internal to the recipe loader (common/recipe_loader.h): applies one layer (a
// parsed YAML map of recipe keys) on top of a Recipe, checking every value against
// the schema and recording where each key was set.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/recipe_interpolate.h"
#include "proto/recipe.pb.h"

namespace rollout::config {

// Where a layer came from: a file, whose locations are "<file>:<line>", or one
// command-line override, whose location is "command line '<text>'".
struct LayerOrigin {
  std::string file;
  std::string override_text;  // set for an override; `file` is then unused
  // True when the caller has already followed the layer's top-level `extends`;
  // otherwise `extends` is an error.
  bool extends_followed = false;

  // "recipes/x.yaml:7" (1-based line) or "command line 'rollout.n=8'".
  std::string Location(const YAML::Mark& mark) const;
};

// Applies `layer` (a YAML map; null means empty) over `recipe`, later values winning
// key by key: messages and map entries merge, lists are replaced, null resets a key
// (and everything under it) to its default. `sources` maps each canonical key set to
// its location; keys reset are erased from it. verl keys that mean nothing here
// (common/verl_inert_keys.h) are skipped, each with a line in `ignored_verl_keys`; verl
// keys for a setting the schema holds under another key (common/verl_synonym_keys.h)
// set that key (a synonym holding a reference to that key, verl's copy of it, sets
// nothing). A value that is one whole `${...}` reference for a key that is not a
// single string, or for an ignored verl key, goes to `pending`, later layers replacing
// it (common/recipe_interpolate.h). Hydra's `_target_` entries (the Python classes
// verl builds its config into) are skipped, noted once a layer.
absl::Status ApplyLayer(const YAML::Node& layer, const LayerOrigin& origin, Recipe* recipe,
                        std::map<std::string, std::string>* sources,
                        std::vector<std::string>* ignored_verl_keys, PendingReferences* pending);

}  // namespace rollout::config
