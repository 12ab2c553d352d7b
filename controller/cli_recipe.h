// What the train and plan subcommands share: reading `RECIPE [key=value ...]` from
// positional arguments into a resolved recipe and its placement.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/recipe_loader.h"
#include "controller/placement.h"

namespace rollout::controller {

struct ResolvedRun {
  config::LoadedRecipe recipe;
  std::string recipe_yaml;  // every field, as printed and saved
  Placement placement;
};

// InvalidArgument when no recipe is named; otherwise the loader's or placement's error,
// or a batch that does not split over the placed workers (controller/batch_splits.h).
absl::StatusOr<ResolvedRun> ResolveRun(const std::vector<std::string>& positional);

// One "<program>: note: ..." line for each verl key the recipe sets that was ignored
// (config::LoadedRecipe::ignored_verl_keys).
void PrintIgnoredVerlKeys(const ResolvedRun& run, const std::string& program, std::ostream& out);

}  // namespace rollout::controller
