// Internal to the recipe loader (common/recipe_loader.h): verl's defaults that follow
// another key (its YAML's ${oc.select:...} interpolations). A follower the recipe never
// writes takes its leader's value once every layer and override is in, as in verl: the
// critic's mini-batch, epochs, shuffling, loss aggregation and token budgets are the
// actor's unless set, the log-prob passes batch by tokens when the actor's update does,
// and the reward model's token budget is the critic's. Leaders come first, so chains
// resolve (reward_model.use_dynamic_bsz <- critic.use_dynamic_bsz <- actor's).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "proto/recipe.pb.h"

namespace rollout::config {

// (follower, leader) canonical dotted keys, in the order they apply.
const std::vector<std::pair<std::string, std::string>>& VerlDefaultLinks();

// Sets each follower absent from `sources` (LoadedRecipe::sources: the keys written) to
// its leader's value. InvalidArgument naming both keys if a leader's value does not fit
// its follower's rules.
absl::Status ApplyVerlDefaultLinks(const std::map<std::string, std::string>& sources, Recipe* recipe);

}  // namespace rollout::config
