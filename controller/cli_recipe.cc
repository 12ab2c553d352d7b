#include "controller/cli_recipe.h"

#include "common/status_macros.h"
#include "controller/batch_splits.h"

namespace rollout::controller {

absl::StatusOr<ResolvedRun> ResolveRun(const std::vector<std::string>& positional) {
  if (positional.empty()) {
    return absl::InvalidArgumentError("name a recipe file (see --help)");
  }
  const std::vector<std::string> overrides(positional.begin() + 1, positional.end());
  ResolvedRun run;
  ASSIGN_OR_RETURN(run.recipe, config::LoadRecipe(positional.front(), overrides));
  run.recipe_yaml = config::RecipeToYaml(run.recipe.recipe);
  ASSIGN_OR_RETURN(run.placement, ResolvePlacement(run.recipe));
  RETURN_IF_ERROR(CheckPlacementBatching(run.recipe.recipe, run.placement));
  return run;
}

void PrintIgnoredVerlKeys(const ResolvedRun& run, const std::string& program, IgnoredKeyNotes notes,
                          std::ostream& out) {
  const std::vector<std::string>& ignored = run.recipe.ignored_verl_keys;
  if (notes == IgnoredKeyNotes::kCountWhenMany && ignored.size() > kIgnoredKeysNotedEach) {
    out << program << ": note: " << ignored.size()
        << " verl keys of the recipe configure only verl's machinery and are ignored; `rollout plan` "
           "with the same arguments lists each with its reason\n";
    return;
  }
  for (const std::string& line : ignored) out << program << ": note: " << line << "\n";
}

}  // namespace rollout::controller
