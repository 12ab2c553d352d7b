// `rollout plan`: resolve a recipe and show what a run would start, without
// starting anything.
#include <iostream>

#include "common/flags.h"
#include "controller/cli.h"
#include "controller/cli_recipe.h"

namespace rollout::controller {

int RunPlanCommand(const std::vector<std::string>& args) {
  FlagSet flags("rollout plan RECIPE [key=value ...]",
                "Prints the resolved recipe (every key, defaults included) and the worker\n"
                "processes a run would start, with their roles and devices. Starts nothing.\n"
                "Like train, refuses a data.train_batch_size that does not split over the\n"
                "placed workers or is smaller than a mini-batch.");
  absl::StatusOr<FlagSet::Parsed> parsed = flags.Parse(args);
  if (!parsed.ok()) {
    std::cerr << "rollout plan: " << parsed.status().message() << "\n";
    return kExitUsage;
  }
  if (parsed->help) {
    std::cout << flags.Usage();
    return kExitOk;
  }
  absl::StatusOr<ResolvedRun> run = ResolveRun(parsed->positional);
  if (!run.ok()) {
    std::cerr << "rollout plan: " << run.status().message() << "\n";
    return kExitUsage;
  }
  PrintIgnoredVerlKeys(*run, "rollout plan", IgnoredKeyNotes::kEach, std::cerr);
  std::cout << "# resolved recipe\n" << run->recipe_yaml << "\n" << run->placement.Describe();
  return kExitOk;
}

}  // namespace rollout::controller
