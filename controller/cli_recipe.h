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

// How the verl keys a recipe sets that were ignored (config::LoadedRecipe::ignored_verl_keys)
// are told: a "<program>: note: ..." line each (`rollout plan`), or so when they are few
// and else one line counting them (`rollout train`: verl's printed config alone sets
// over a hundred).
enum class IgnoredKeyNotes { kEach, kCountWhenMany };

// At most this many are noted one by one with IgnoredKeyNotes::kCountWhenMany.
inline constexpr size_t kIgnoredKeysNotedEach = 8;

void PrintIgnoredVerlKeys(const ResolvedRun& run, const std::string& program, IgnoredKeyNotes notes,
                          std::ostream& out);

}  // namespace rollout::controller
