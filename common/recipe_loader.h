// YAML recipe -> config::Recipe (proto/recipe.proto), with verl-style overrides.
//
// Layers, applied in order, later ones winning key by key:
//   1. the base recipe named by a top-level `extends: <path>` (relative to the file
//      that names it; bases may extend further bases; a cycle is an error),
//   2. the recipe file itself,
//   3. command-line overrides `a.b.c=value` (value parsed as YAML: `3`, `1e-5`,
//      `true`, `[a, b]`, `null` to reset to the default).
// Then `${a.b.c}` references inside string values are replaced by the referenced
// field's resolved value (e.g. trainer.default_local_dir).
//
// verl spellings are accepted: a leading `actor_rollout_ref.` is dropped
// (`actor_rollout_ref.actor.optim.lr` -> `actor.optim.lr`) and
// `actor_rollout_ref.model` means `actor.model`; the same holds for the nested YAML form.
//
// Every value is checked against the schema and its options (schema_options.proto):
// each error is InvalidArgument (NotFound for a missing file) with a one-line message
// naming the key and where it was written, e.g.
//   unknown key 'actor.optim.learning_rate' at recipes/x.yaml:12 — did you mean 'actor.optim.lr'?
//   wrong type for 'rollout.n' at recipes/x.yaml:7: expected an integer, got 'eight'
//   'rollout.n' at recipes/x.yaml:7 must be >= 1, got 0
//   'algorithm.adv_estimator' at command line 'algorithm.adv_estimator=grop' must be one of gae|grpo|...; got 'grop' — did you mean 'grpo'?
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/recipe.pb.h"

namespace rollout::config {

struct LoadedRecipe {
  Recipe recipe;
  // Canonical dotted key ("actor.optim.lr", "resource_pools.gpu.nodes") -> where its
  // value was last set ("recipes/x.yaml:12" or "command line 'actor.optim.lr=1e-5'").
  // Keys never written are absent. Used to point semantic errors at their source.
  std::map<std::string, std::string> sources;
};

// Loads `path` (and its bases), then applies `overrides` in order.
absl::StatusOr<LoadedRecipe> LoadRecipe(const std::string& path,
                                        const std::vector<std::string>& overrides);

// Parses recipe YAML held in memory; `origin` names it in errors. `extends` is not
// allowed here (there is no file to resolve it against).
absl::StatusOr<LoadedRecipe> ParseRecipeYaml(const std::string& yaml,
                                             const std::string& origin);

// Every field, defaults included, maps sorted by key, in the nested YAML form that
// LoadRecipe reads back to an equal Recipe.
std::string RecipeToYaml(const Recipe& recipe);

// Where `key` was set, or "default" when it never was.
std::string SourceOf(const LoadedRecipe& loaded, const std::string& key);

}  // namespace rollout::config
