// YAML recipe -> config::Recipe (proto/recipe.proto), with verl-style overrides.
//
// Layers, applied in order, later ones winning key by key:
//   1. the base recipe named by a top-level `extends: <path>` (relative to the file
//      that names it; bases may extend further bases; a cycle is an error),
//   2. the recipe file itself,
//   3. command-line overrides `a.b.c=value` (value parsed as YAML: `3`, `1e-5`,
//      `true`, `[a, b]`; `null`, `~` or nothing resets the key to its default);
//      Hydra's `+a.b.c=value` and `++a.b.c=value`, which verl's commands use to add
//      keys its config lacks, set the key the same way.
// Messages and map entries (`resource_pools.gpu.nodes`) merge key by key; lists are
// replaced whole, a single scalar being a list of one. Then `${a.b.c}` references
// inside string values are replaced by the referenced key's resolved value, defaults
// included (e.g. trainer.default_local_dir's "checkpoints/${trainer.project_name}/...");
// a value that is one whole reference may stand for any key (a number, a boolean, a
// list, an ignored verl key), as verl's printed configs write their copies of a
// setting, and verl's forms `${oc.select:a.b,default}` and `${.sibling}` are read
// (common/recipe_interpolate.h). References resolve after the last layer, so an
// override of a setting reaches its copies.
//
// Unset versus default: a key no layer sets stays unset in the Recipe (has_x() is
// false) and reads as its proto default; a key reset with null is cleared. Three
// exceptions, so that readers see resolved values: an empty list with a
// (default_list) is filled with it (an explicit empty list for such a field is an
// error: it would print, and so read back, as the default); a string whose default
// holds `${...}` is set to its resolved text; and a key whose verl default is another
// key's value (critic.ppo_mini_batch_size is the actor's: common/verl_default_links.h)
// is set to that value. Compare loaded recipes with MessageDifferencer::Equivalent,
// which treats unset and default alike.
//
// verl spellings are accepted: a leading `actor_rollout_ref.` is dropped
// (`actor_rollout_ref.actor.optim.lr` -> `actor.optim.lr`) and
// `actor_rollout_ref.model` means `actor.model`; the same holds for the nested YAML form.
// verl's keys for its own machinery (`actor.fsdp_config`, `rollout.name: vllm`, ...)
// are accepted with the values that change nothing here and listed in
// ignored_verl_keys; other values of them are errors (common/verl_inert_keys.h). verl's
// copies and second spellings of a setting (`rollout.response_length` for
// `data.max_response_length`, `actor.optim.clip_grad` for `actor.grad_clip`) set it
// (common/verl_synonym_keys.h); one layer giving both spellings different values is an
// error. Hydra's `_target_` entries are skipped, with one note. verl's whole printed
// PPO config loads (tests/data/verl_ppo_trainer_printed.yaml).
//
// Every value is checked against the schema and its options (schema_options.proto):
// each error is InvalidArgument (NotFound for a missing file) with a one-line message
// naming the key and where it was written, e.g.
//   unknown key 'actor.optim.learning_rate' at recipes/x.yaml:12 — did you mean 'actor.optim.lr'?
//   wrong type for 'rollout.n' at recipes/x.yaml:7: expected an integer, got 'eight'
//   'rollout.n' at recipes/x.yaml:7 must be >= 1, got 0
//   'algorithm.adv_estimator' at command line 'algorithm.adv_estimator=grop' must be one of gae|grpo|...; got 'grop' — did you mean 'grpo'?
//   recipes/x.yaml:4:7: YAML syntax error: end of sequence flow not found
//   recipe file 'recipes/base.yaml' not found (extended from recipes/x.yaml:1)
// Files are named as the caller gave them (bases: joined to the naming file's folder).
// No exception escapes; nothing is read but the recipe files.
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
  // Map entries have a key of their own ("resource_pools.gpu"). Keys never written,
  // or reset with null, are absent. Used to point semantic errors at their source.
  std::map<std::string, std::string> sources;
  // One line per verl key the recipe sets that configures only verl's machinery (FSDP,
  // vLLM, Ray, ...: common/verl_inert_keys.h) and was ignored, in the order met:
  // "verl's 'actor.fsdp_config' at recipes/x.yaml:9 is ignored: FSDP's sharding ...".
  std::vector<std::string> ignored_verl_keys;
};

// Loads `path` (and its bases), then applies `overrides` in order.
absl::StatusOr<LoadedRecipe> LoadRecipe(const std::string& path,
                                        const std::vector<std::string>& overrides);

// Parses recipe YAML held in memory; `origin` names it in errors. `extends` is not
// allowed here (there is no file to resolve it against).
absl::StatusOr<LoadedRecipe> ParseRecipeYaml(const std::string& yaml,
                                             const std::string& origin);

// Every field, defaults included (an empty list with a (default_list) prints that
// default), maps sorted by key, doubles in the shortest form that reads back exactly,
// strings quoted where YAML needs it. ParseRecipeYaml reads the text back to a Recipe
// Equivalent to `recipe` once the loader's defaults are applied (for a loaded recipe:
// Equivalent to it), and printing that Recipe gives the same text.
std::string RecipeToYaml(const Recipe& recipe);

// Where `key` (canonical or verl spelling) was set, or "default" when it never was.
std::string SourceOf(const LoadedRecipe& loaded, const std::string& key);

}  // namespace rollout::config
