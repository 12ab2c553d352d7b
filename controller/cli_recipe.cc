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

void PrintIgnoredVerlKeys(const ResolvedRun& run, const std::string& program, std::ostream& out) {
  for (const std::string& line : run.recipe.ignored_verl_keys) out << program << ": note: " << line << "\n";
}

}  // namespace rollout::controller
